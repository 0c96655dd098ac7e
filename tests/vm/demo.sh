#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# make demo: boot a test VM whose origin is an emulated 7200 rpm disk
# (scripts/hdd-nbdkit.py over NBD, 2 GiB, time scale 0.1) and whose cache is
# a 256 MiB file; measure the bare disk, run 20 s of verified fio random
# writes through a wow device, then watch dm-wow destage them in sweep order
# (see tests/vm/demo-guest.sh).  About two minutes.  Needs the module built
# (make module) and nbdkit's python plugin (scripts/setup.sh); options go to
# `wowvm.py demo` (--keep, --module KO, --timescale X).
exec "$(dirname "$0")/wowvm.py" demo "$@"
