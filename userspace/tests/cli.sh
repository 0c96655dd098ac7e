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
expect_rc cli_create_too_few_arguments_exits_2 2 create x /dev/null
expect_rc cli_create_bad_name_exits_2 2 create a/b /dev/null /dev/zero
expect_rc cli_create_unknown_option_exits_2 2 create x /dev/null /dev/zero -o blocksize=4096
expect_rc cli_create_bad_value_exits_2 2 create x /dev/null /dev/zero --option block_size=3000
expect_rc cli_create_bad_combination_exits_2 2 create x /dev/null /dev/zero -o block_size=8K,max_destage_size=12K
expect_rc cli_create_bad_watermarks_exits_2 2 create x /dev/null /dev/zero -o low_watermark=70 -o high_watermark=70
expect_rc cli_create_option_without_value_exits_2 2 create x /dev/null /dev/zero -o
expect_rc cli_create_not_block_device_exits_1 1 create x /dev/null /dev/zero --dry-run
expect_rc cli_remove_no_argument_exits_2 2 remove
expect_rc cli_remove_bad_interval_exits_2 2 remove x --clean --interval 0
expect_rc cli_clean_bad_option_exits_2 2 clean x --force
expect_rc cli_status_bad_watch_exits_2 2 status --watch x
expect_rc cli_status_count_without_watch_exits_2 2 status --count 2
expect_rc cli_status_prometheus_and_json_exits_2 2 status --prometheus --json
expect_rc cli_status_prometheus_and_watch_exits_2 2 status --prometheus --watch 1
expect_rc cli_set_fixed_option_exits_1 1 set x block_size 8192
expect_rc cli_set_bad_size_exits_1 1 set x max_destage_size 12Q

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

# getopt_long: an option between the arguments, a value joined to -o,
# a flag given a value
out=$("$WOWCTL" create x /dev/null -oblock_size=3000 /dev/zero 2>&1)
case $out in
*'create: Invalid block_size'*) pass cli_option_between_arguments ;;
*) fail cli_option_between_arguments "$out" ;;
esac
out=$("$WOWCTL" status --json=yes 2>&1)
case $out in
*"status: option '--json' takes no value"*) pass cli_flag_with_value ;;
*) fail cli_flag_with_value "$out" ;;
esac
expect_rc cli_flag_with_value_exits_2 2 status --json=yes
out=$("$WOWCTL" metadata-size --json --cache-size 64G --block-size=4K)
case $out in
*'"segments": 65115,'*) pass cli_options_any_order ;;
*) fail cli_options_any_order "$out" ;;
esac

out=$("$WOWCTL" dump "$IMG" 2> /dev/null)
case $out in
*'"superblock": null'*'no superblock'*) pass cli_dump_blank_json ;;
*) fail cli_dump_blank_json "dump of a blank image: $out" ;;
esac

# design.rst: a 64 GiB cache (4 KiB blocks, 1 MiB erase blocks) gives
# each of the two checkpoint areas 210 MiB (format version 5: from erase
# block 1, 10 bytes a slot); 18 bytes of RAM per cache block at most
out=$("$WOWCTL" metadata-size --cache-size 64G --block-size 4K \
	--erase-block-size 1M --json)
case $out in
*'"segments": 65115,'*'"checkpoint_area_bytes": 440401920,'*'"first_segment_sector": 862208,'*)
	pass cli_metadata_size_64g ;;
*) fail cli_metadata_size_64g "$out" ;;
esac

out=$("$WOWCTL" --help 2>&1)
case $out in
*"create NAME ORIGIN CACHE"*"remove [--clean] DEV"*"clean "*"--health"*"clear-stats DEV"*"check CACHE"*"dump [--scan] CACHE"*"writeback"*"metadata-size"*"4 errors"*"3 a device is"*"4 a device failed"*"130 interrupted"*)
	pass cli_help_lists_commands ;;
*) fail cli_help_lists_commands "a command or exit code missing from --help" ;;
esac

# the man page documents every command and exit code of --help
MAN=$(dirname "$0")/../wowctl.8
missing=""
for w in create remove clean status table set cleaner commit clear\\-stats \
	fields check dump writeback metadata\\-size \\-\\-health \
	\\-\\-watch \\-\\-clean \\-\\-option 130; do
	grep -qF -- "$w" "$MAN" || missing="$missing $w"
done
if [ -z "$missing" ]; then pass cli_man_page_lists_commands
else fail cli_man_page_lists_commands "wowctl.8 lacks:$missing"; fi

out=$("$WOWCTL" fields --rst)
n=$(printf '%s\n' "$out" | grep -c '^   \* - ``')
want=$("$WOWCTL" fields --json | grep -o '"id"' | wc -l)
if [ "$n" -eq "$want" ] && [ "$n" -ge 32 ] && printf '%s\n' "$out" | grep -q '``age_oldest_s``'
then pass cli_fields_rst
else fail cli_fields_rst "$n field rows"; fi

exit $failed
