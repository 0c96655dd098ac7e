#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# make demo: boot a test VM, create a wow device over a 2 GiB origin and a
# 256 MiB cache, run 20 s of verified fio random writes and print the
# device's status and table (see tests/vm/demo-guest.sh).  Needs the module
# built (make module); options go to `wowvm.py demo` (--keep, --module KO).
exec "$(dirname "$0")/wowvm.py" demo "$@"
