#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# wowctl command-line behaviour that needs no root and no device: help,
# usage errors (exit 2), and the generated field documentation.
# Usage: tests/cli.sh path/to/wowctl
WOWCTL=${1:-./wowctl}
failed=0

pass() { echo "PASS: userspace/$1"; }
fail() { echo "FAIL: userspace/$1 ($2)"; failed=1; }

# expect_rc NAME RC ARGS...: wowctl ARGS exits with RC
expect_rc() {
	name=$1 want=$2
	shift 2
	"$WOWCTL" "$@" >/dev/null 2>&1
	rc=$?
	if [ "$rc" -eq "$want" ]; then pass "$name"
	else fail "$name" "wowctl $* exited $rc, want $want"; fi
}

expect_rc cli_help_exits_0 0 --help
expect_rc cli_no_command_exits_2 2
expect_rc cli_unknown_command_exits_2 2 frobnicate
expect_rc cli_unknown_option_exits_2 2 status --yaml
expect_rc cli_missing_argument_exits_2 2 set mydev low_watermark
expect_rc cli_extra_argument_exits_2 2 commit a b
expect_rc cli_cleaner_bad_word_exits_2 2 cleaner mydev maybe
expect_rc cli_fields_rst_and_json_exits_2 2 fields --rst --json
expect_rc cli_missing_device_exits_1 1 status wow-test-no-such-device

# offline commands (wowcache; the images are tested in test_wowcache.c)
IMG=$(mktemp /tmp/wowctl-cli.XXXXXX)
trap 'rm -f "$IMG"' EXIT
dd if=/dev/zero of="$IMG" bs=1M count=1 2> /dev/null
expect_rc cli_check_no_argument_exits_2 2 check
expect_rc cli_check_two_arguments_exits_2 2 check "$IMG" "$IMG"
expect_rc cli_check_missing_file_exits_1 1 check /nonexistent/wowctl-cli
expect_rc cli_check_blank_exits_4 4 check "$IMG"
expect_rc cli_dump_blank_exits_4 4 dump --scan "$IMG"
expect_rc cli_dump_bad_option_exits_2 2 dump --dry-run "$IMG"
expect_rc cli_writeback_one_argument_exits_2 2 writeback "$IMG"
expect_rc cli_writeback_blank_exits_4 4 writeback --dry-run "$IMG" "$IMG"
expect_rc cli_metadata_size_needs_size_exits_2 2 metadata-size
expect_rc cli_metadata_size_bad_size_exits_2 2 metadata-size --cache-size 12Q
expect_rc cli_metadata_size_no_value_exits_2 2 metadata-size --cache-size
expect_rc cli_metadata_size_overflow_exits_2 2 metadata-size --cache-size 16777217T
expect_rc cli_metadata_size_too_small_exits_2 2 metadata-size --cache-size 1M
expect_rc cli_metadata_size_exits_0 0 metadata-size --cache-size=64G

out=$("$WOWCTL" dump "$IMG" 2> /dev/null)
case $out in
*'"superblock": null'*'no superblock'*) pass cli_dump_blank_json ;;
*) fail cli_dump_blank_json "dump of a blank image: $out" ;;
esac

# design.rst: a 64 GiB cache (4 KiB blocks, 1 MiB erase blocks) gives
# the checkpoint area 146 MiB; 14 bytes of RAM per cache block at most
out=$("$WOWCTL" metadata-size --cache-size 64G --block-size 4K \
	--erase-block-size 1M --json)
case $out in
*'"segments": 65389,'*'"checkpoint_area_bytes": 153157632,'*'"first_segment_sector": 301056,'*)
	pass cli_metadata_size_64g ;;
*) fail cli_metadata_size_64g "$out" ;;
esac

out=$("$WOWCTL" --help 2>&1)
case $out in
*"clear-stats DEV"*"check CACHE"*"dump [--scan] CACHE"*"writeback"*"metadata-size"*"4 errors"*)
	pass cli_help_lists_commands ;;
*) fail cli_help_lists_commands "clear-stats missing from --help" ;;
esac

out=$("$WOWCTL" fields --rst)
n=$(printf '%s\n' "$out" | grep -c '^   \* - ``')
want=$("$WOWCTL" fields --json | grep -o '"id"' | wc -l)
if [ "$n" -eq "$want" ] && [ "$n" -ge 32 ] && printf '%s\n' "$out" | grep -q '``age_oldest_s``'
then pass cli_fields_rst
else fail cli_fields_rst "$n field rows"; fi

exit $failed
