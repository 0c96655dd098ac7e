#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
#
# Turn the console log of a KUnit kernel (kunit.py's build_dir/test.log) into
# one line per test case:
#   PASS: kunit/<suite>.<case>
#   FAIL: kunit/<suite>.<case>      followed by its diagnostic lines, indented
#   SKIP: kunit/<suite>.<case>
# and a summary line.  Exit status 0 only if at least one case ran and none
# failed.
#
# The KTAP is parsed with the kernel tree's own tools/testing/kunit/
# kunit_parser.py (the one kunit.py used), so nested (parameterised) cases,
# crashes and missing results are handled the same way kunit.py sees them.
# A parameterised case is reported as one line; its failing parameters'
# diagnostics are printed under it.
#
# A case that passed but whose console output shows a kernel BUG, WARNING,
# Oops, KASAN/UBSAN report or lockdep splat is reported as FAIL.

import argparse
import contextlib
import io
import os
import re
import shlex
import subprocess
import sys
import textwrap

KERNEL_PROBLEM = re.compile(
	r'(\bBUG[: ]|WARNING:|Oops|general protection fault|KASAN:|UBSAN:|'
	r'kfence:|possible recursive locking|possible circular locking|'
	r'inconsistent lock state|suspicious RCU usage|INFO: task .* blocked|'
	r'Kernel panic|Call Trace:|Modules linked in:)')

# UML console chatter that says nothing about the tests.
NOISE = re.compile(r'setup_one_line failed for device|'
		   r'Using a channel type which is configured out of UML')

def indent(lines):
	text = textwrap.dedent('\n'.join(l.rstrip() for l in lines))
	return ['    ' + l for l in text.splitlines() if l.strip()]

def diagnostics(test, kp):
	"""The log of a test plus those of its failing/crashed subtests."""
	out = list(test.log)
	for sub in test.subtests:
		if sub.status not in (kp.TestStatus.SUCCESS, kp.TestStatus.SKIPPED):
			name = sub.name or '(no result line)'
			out.append(f'[{name}]')
			out.extend(diagnostics(sub, kp))
	return out

def all_logs(test):
	out = list(test.log)
	for sub in test.subtests:
		out.extend(all_logs(sub))
	return out

def list_tests(linux, raw):
	"""Names (suite.case) the kernel would run, in order, asking the same
	kernel binary with the kunit.* parameters of the run (from its
	"Kernel command line:" line) plus kunit.action=list.  Used only to name
	cases that produced no result line because the kernel died first."""
	cmdline = None
	for l in raw:
		m = re.search(r'Kernel command line: (.*)$', l)
		if m:
			cmdline = m.group(1)
			break
	if not linux or not os.access(linux, os.X_OK) or cmdline is None:
		return []
	try:
		params = [a for a in shlex.split(cmdline) if a.startswith('kunit.')
			  and not a.startswith('kunit.action=')]
		out = subprocess.run([linux] + params + [
			'kunit.action=list', 'mem=256M', 'console=tty',
			'kunit_shutdown=halt'], stdin=subprocess.DEVNULL,
			stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
			timeout=60, text=True, errors='backslashreplace').stdout
	except (OSError, ValueError, subprocess.SubprocessError):
		return []
	names = []
	started = False
	for l in out.splitlines():
		l = l.strip()
		if l.startswith('KTAP version'):
			started = True
		elif started and re.match(r'^[^\s.]+\.[^\s.]+$', l):
			names.append(l)
	return names

def main():
	ap = argparse.ArgumentParser()
	ap.add_argument('--kernel-src', required=True)
	ap.add_argument('--summary-suffix', default='')
	ap.add_argument('--timed-out', metavar='SECONDS',
			help='kunit.py killed the kernel at this timeout')
	ap.add_argument('--linux', help='the UML kernel, to name cases that '
			'never reported a result')
	ap.add_argument('console_log')
	args = ap.parse_args()

	sys.path.insert(0, os.path.join(args.kernel_src, 'tools/testing/kunit'))
	import kunit_parser as kp

	with open(args.console_log, errors='backslashreplace') as f:
		raw = f.readlines()
	# kunit_parser prints its own progress report; keep it quiet.
	with contextlib.redirect_stdout(io.StringIO()):
		if hasattr(kp, 'stdout'):
			kp.stdout._output = sys.stdout
		root = kp.parse_run_tests(raw)

	counts = {'PASS': 0, 'FAIL': 0, 'SKIP': 0}
	lines = []

	def report(status, name, diag=()):
		counts[status] += 1
		lines.append(f'{status}: kunit/{name}')
		if status == 'FAIL':
			lines.extend(indent(diag))

	def case_status(t):
		if t.status == kp.TestStatus.SUCCESS:
			return 'PASS'
		if t.status == kp.TestStatus.SKIPPED:
			return 'SKIP'
		return 'FAIL'

	# Cases and suites with no result line (the kernel died) have no name
	# in the KTAP; ask the kernel for the list it would run.
	listed = {}
	if any(not st.name or any(not c.name for c in st.subtests)
	       for st in root.subtests):
		for n in list_tests(args.linux, raw):
			sn, cn = n.split('.', 1)
			listed.setdefault(sn, []).append(cn)
	listed_suites = list(listed)
	died = []	# set once the first missing result is reported

	def missing(diag):
		if died:
			return ['not run: an earlier case crashed or hung']
		died.append(True)
		if args.timed_out:
			return [f'no result: the run was killed at its '
				f'{args.timed_out}s timeout (WOW_KUNIT_TIMEOUT); this '
				'case or a later one hung (console output can lag '
				'behind)'] + diag
		return ['no result: the kernel crashed or stopped while running '
			'this (see the console log)'] + diag

	for si, suite in enumerate(root.subtests, 1):
		sname = suite.name
		if not sname and si <= len(listed_suites):
			sname = listed_suites[si - 1]
		sname = sname or f'suite{si}'
		if not suite.subtests:
			# A suite with no cases: skipped as a whole, failed before its
			# cases ran, or never reached because the kernel died.
			st = case_status(suite)
			if not suite.name:
				diag = missing(list(suite.log))
				for cn in listed.get(sname, []):
					report('FAIL', f'{sname}.{cn}', diag)
					diag = missing([])
				if sname not in listed:
					report('FAIL', sname, diag)
				continue
			diag = list(suite.log)
			if st == 'PASS':
				st = 'FAIL'
				diag.insert(0, 'suite reported no test cases')
			report(st, sname, diag)
			continue
		case_failed = False
		cnames = listed.get(sname, [])
		for ci, case in enumerate(suite.subtests, 1):
			cname = case.name
			if not cname and ci <= len(cnames):
				cname = cnames[ci - 1]
			cname = cname or f'case{ci}'
			st = case_status(case)
			diag = diagnostics(case, kp)
			if not case.name:
				diag = missing(diag)
			if st == 'PASS':
				bad = [l for l in all_logs(case) if KERNEL_PROBLEM.search(l)]
				if bad:
					st = 'FAIL'
					diag = ['passed, but the kernel reported a problem '
						'during this case:'] + all_logs(case)
			if st == 'FAIL':
				case_failed = True
			report(st, f'{sname}.{cname}', diag)
		suite_bad = [l for l in suite.log if KERNEL_PROBLEM.search(l)]
		if suite_bad or (not case_failed and suite.status not in (
				kp.TestStatus.SUCCESS, kp.TestStatus.SKIPPED)):
			# Every case passed but the suite did not (its exit failed,
			# its result line is missing), or the kernel complained
			# outside any case (suite init/exit).
			report('FAIL', f'{sname}.(suite)', list(suite.log) or
			       [f'suite status {suite.status.name}'])

	problem = None
	if root.status == kp.TestStatus.FAILURE_TO_PARSE_TESTS:
		problem = 'no KTAP output found: the kernel did not boot or ' \
			  'KUnit did not run'
	elif root.expected_count is not None and \
			len(root.subtests) < root.expected_count:
		problem = 'fewer suites than announced'
	elif sum(counts.values()) == 0:
		problem = 'no test ran (does the filter glob match any suite?)'
	if problem:
		diag = [problem]
		if root.status == kp.TestStatus.FAILURE_TO_PARSE_TESTS:
			tail = [l.rstrip() for l in raw if not NOISE.search(l)][-30:]
			diag += ['--- last console lines:'] + tail
		report('FAIL', 'run', diag)

	for l in lines:
		print(l)
	suffix = f' ({args.summary_suffix})' if args.summary_suffix else ''
	print(f"kunit: {counts['PASS']} passed, {counts['FAIL']} failed, "
	      f"{counts['SKIP']} skipped{suffix}")
	ran = counts['PASS'] + counts['FAIL'] + counts['SKIP']
	return 0 if counts['FAIL'] == 0 and ran > 0 else 1

if __name__ == '__main__':
	sys.exit(main())
