#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Print the kernel version dm-wow builds and tests against: $KV if set, else
# the newest directory under /lib/modules that has a build/ tree.
set -euo pipefail
if [ -n "${KV:-}" ]; then
	echo "$KV"
	exit 0
fi
for d in $(ls -d /lib/modules/*/build 2>/dev/null | sort -V -r); do
	basename "$(dirname "$d")"
	exit 0
done
echo "kver: no /lib/modules/*/build; run scripts/setup.sh" >&2
exit 1
