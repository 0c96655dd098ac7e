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

out=$("$WOWCTL" --help 2>&1)
case $out in
*"clear-stats DEV"*) pass cli_help_lists_commands ;;
*) fail cli_help_lists_commands "clear-stats missing from --help" ;;
esac

out=$("$WOWCTL" fields --rst)
n=$(printf '%s\n' "$out" | grep -c '^   \* - ``')
want=$("$WOWCTL" fields --json | grep -o '"id"' | wc -l)
if [ "$n" -eq "$want" ] && [ "$n" -ge 32 ] && printf '%s\n' "$out" | grep -q '``age_oldest_s``'
then pass cli_fields_rst
else fail cli_fields_rst "$n field rows"; fi

exit $failed
