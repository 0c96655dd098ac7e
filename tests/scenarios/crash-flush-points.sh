#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Crash consistency at every flush point (invariants 2, 3 and 6): an 8 MiB
# cache of 512 KiB erase blocks, 4 KiB writes, a checkpoint every 256 log
# blocks.  The campaign is tests/vm/guest/flush-points.sh.
#
# vm: origin=2G cache=512M timeout=1800 timeout_full=21600
. "${WOW_LIB:-/wow/lib.sh}"
WOW_FP_GEOMETRY=small
. /wow/guest/flush-points.sh
