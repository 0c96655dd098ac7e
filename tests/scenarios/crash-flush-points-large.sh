#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Crash consistency at every flush point on large erase blocks: a 32 MiB
# cache of 4 MiB erase blocks, writes of up to 1 MiB (records of more than
# one bio: issue 34, finding 3), a checkpoint every 32 log blocks while the
# cache is kept full (checkpoints taken with no free segment: finding 1).
# The campaign is tests/vm/guest/flush-points.sh.
#
# vm: origin=2G cache=512M timeout=1800 timeout_full=21600
. "${WOW_LIB:-/wow/lib.sh}"
WOW_FP_GEOMETRY=large
. /wow/guest/flush-points.sh
