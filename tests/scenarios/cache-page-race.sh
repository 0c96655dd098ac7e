#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# A write whose pages change while it is in flight (an O_DIRECT buffer
# another thread keeps writing: allowed, its result is unspecified) must
# not make a log record whose data disagrees with its checksum: the next
# load would call that record corrupt and refuse the cache.  `pagerace`
# writes 64 KiB chunks from a buffer a second thread scribbles on, with
# fdatasyncs; then a clean shutdown; the cache must load again with no
# record dropped, and every chunk must read back without an error.
#
# vm: origin=2G cache=256M timeout=180
. "${WOW_LIB:-/wow/lib.sh}"

command -v pagerace > /dev/null || fail "no pagerace in the guest"
wow_reset_disks
wow_create pr "$ORIGIN" "$CACHE"
run pagerace "$(dm_node pr)" 32 8
echo "status: $(wow_status pr)"
wow_remove pr
# the records' checksums are what is checked: scan them, as after a crash
drop_checkpoint "$CACHE"

info "load again after the clean shutdown"
dmesg_clear
dmsetup create pr --table "$(wow_table "$ORIGIN" "$CACHE")" || {
	dmesg_since | grep wow | sed 's/^/    kernel: /'
	fail "the cache does not load after writes whose pages changed in flight"
}
dmesg_since | grep wow | sed 's/^/    kernel: /'
if dmesg_since | grep -q "dropped a torn or corrupt"; then
	fail "a record written before a clean shutdown was dropped"
fi
run dd if="$(dm_node pr)" of=/dev/null bs=64k count=512 iflag=direct
wow_no_errors pr
wow_remove pr
echo "cache-page-race: ok"
