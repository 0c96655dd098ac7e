#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# The cscan destage policy never costs correctness: random writes of mixed
# sizes, destaged during the load (watermarks 0/1) and then in cleaner
# mode, verify through the device and then from the origin alone.
#
# vm: origin=2G cache=256M timeout=300
. "${WOW_LIB:-/wow/lib.sh}"

policy_keeps_data cscan
echo "policy-cscan-keeps-data: ok"
