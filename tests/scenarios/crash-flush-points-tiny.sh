#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Crash consistency at every flush point on a tiny cache of small blocks: a
# 2 MiB cache of 512-byte blocks and 64 KiB erase blocks (a 4 KiB write is
# 8 blocks; about 30 segments churn all the time), a checkpoint every 16
# log blocks.  The quick profile checks 60 flush points (the wowctl view of
# a 512-byte-block image takes longer to read); the full one, 1000.  The
# campaign is tests/vm/guest/flush-points.sh.
#
# vm: origin=2G cache=512M timeout=1800 timeout_full=21600
. "${WOW_LIB:-/wow/lib.sh}"
WOW_FP_GEOMETRY=tiny
[ "${WOW_PROFILE:-quick}" != quick ] || : "${WOW_FP_BUDGET:=60}"
. /wow/guest/flush-points.sh
