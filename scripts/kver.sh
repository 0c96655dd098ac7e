#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Print the kernel version dm-wow builds and tests against: $KV if set, else
# Debian 12's own kernel (the newest 6.1 under /lib/modules with a build/
# tree), else the newest directory there that has one.  Installing another
# kernel's headers (6.12, for `make check`'s second kernel) does not change
# the default.
set -euo pipefail
if [ -n "${KV:-}" ]; then
	echo "$KV"
	exit 0
fi
for pat in '6.1.*' '*'; do
	for d in $(ls -d /lib/modules/$pat/build 2>/dev/null | sort -V -r); do
		basename "$(dirname "$d")"
		exit 0
	done
done
echo "kver: no /lib/modules/*/build; run scripts/setup.sh" >&2
exit 1
