"""tests/vm/check-debug.sh without booting: a fake debug-kernel.sh and a
fake wowvm.py stand in, so what is run, kept and resumed can be checked."""

import os
import shutil
import subprocess

from conftest import SCRIPTS

REPO = os.path.dirname(SCRIPTS)

FAKE_WOWVM = r'''#!/bin/bash
# run --flavour debug --profile full --jobs N --suite vm-new SCENARIO...
while [ "$1" != --suite ]; do shift; done
shift 2
mkdir -p "$LOGS/results"
echo "vm: run directory $LOGS" >&2
for s in "$@"; do
	n=$(basename "$s" .sh)
	# the session ends here, once the passes before were taken in (a real
	# run is minutes past them): the whole process group dies
	if [ "$n" = "$KILL_AT" ]; then
		for i in $(seq 100); do
			ls "$WOW_CACHE"/check-debug/*/passed/b > /dev/null 2>&1 &&
				break
			sleep 0.1
		done
		kill -9 0
	fi
	echo "$n" >> "$RAN"
	echo "crash-flush-points: 200 flush points checked (of 999), 0 failures" \
		> "$LOGS/results/$n.out"
	if [ -f "$FAILING/$n" ]; then echo "FAIL: vm-new/$n (boom)"
	else echo "PASS: vm-new/$n"; fi
done
echo "vm: done; logs in $LOGS"
for s in "$@"; do [ -f "$FAILING/$(basename "$s" .sh)" ] && exit 1; done
exit 0
'''


def make_repo(tmp_path, scenarios=("a", "b", "crash-flush-points")):
    r = tmp_path / "repo"
    (r / "tests/vm").mkdir(parents=True)
    (r / "tests/scenarios").mkdir(parents=True)
    (r / "dm-wow").mkdir()
    (r / "userspace").mkdir()
    (r / "dm-wow/x.c").write_text("int x;\n")
    (r / "userspace/y.c").write_text("int y;\n")
    shutil.copy(os.path.join(REPO, "tests/vm/check-debug.sh"),
                r / "tests/vm/check-debug.sh")
    (r / "tests/vm/debug-kernel.sh").write_text(
        "#!/bin/sh\n[ \"$1\" = dir ] && echo /nonexistent/kdir-1\nexit 0\n")
    (r / "tests/vm/wowvm.py").write_text(FAKE_WOWVM)
    for n in scenarios:
        (r / "tests/scenarios" / (n + ".sh")).write_text(
            '#!/bin/sh\n# vm: origin=1G\n. "${WOW_LIB:-/wow/lib.sh}"\n'
            'echo %s\n' % n)
    for f in (r / "tests/vm").iterdir():
        f.chmod(0o755)
    env = dict(os.environ, GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@t",
               GIT_COMMITTER_NAME="t", GIT_COMMITTER_EMAIL="t@t")
    for cmd in (["git", "init", "-q"], ["git", "add", "-A"],
                ["git", "commit", "-qm", "x"]):
        subprocess.run(cmd, cwd=r, check=True, env=env)
    return r


def run(r, tmp_path, kill_at="", only=""):
    ran = tmp_path / "ran"
    if ran.exists():
        ran.unlink()
    env = dict(os.environ, WOW_CACHE=str(tmp_path / "cache"),
               WOW_FP_SHARDS="2", LOGS=str(tmp_path / "logs"),
               RAN=str(ran), FAILING=str(tmp_path / "failing"),
               KILL_AT=kill_at, WOW_CHECK_DEBUG_ONLY=only)
    p = subprocess.run([str(r / "tests/vm/check-debug.sh")], cwd=r,
                       env=env, capture_output=True, text=True,
                       start_new_session=True)
    names = ran.read_text().split() if ran.exists() else []
    return p.returncode, p.stdout, names


def test_shards_resume_and_rerun(tmp_path):
    r = make_repo(tmp_path)
    (tmp_path / "failing").mkdir()
    (tmp_path / "failing" / "b").write_text("")
    rc, out, ran = run(r, tmp_path)
    assert rc != 0
    assert sorted(ran) == ["a", "b", "crash-flush-points-1of2",
                           "crash-flush-points-2of2"]
    assert "FAIL: vm/b (boom)" in out
    assert "PASS: vm/a\n" in out
    # every shard is told its shard
    sc = list((tmp_path / "cache/check-debug").glob("*/scenarios/*.sh"))
    assert sorted(p.name for p in sc) == ["crash-flush-points-1of2.sh",
                                          "crash-flush-points-2of2.sh"]
    for p in sc:
        assert "WOW_FP_SHARD=%d/2" % (int(p.name[19]) - 1) in p.read_text()

    # the next run: only what failed, the rest reported as earlier passes
    (tmp_path / "failing" / "b").unlink()
    rc, out, ran = run(r, tmp_path)
    assert rc == 0
    assert ran == ["b"]
    assert "PASS: vm/a (passed earlier at this tree" in out
    assert ("400 flush points checked without a failure on the debug "
            "kernel, in the 2 of 2 flush-point shards") in out

    # an edited scenario runs again; an edit outside what results depend
    # on (docs) keeps them
    (r / "tests/scenarios/a.sh").write_text(
        (r / "tests/scenarios/a.sh").read_text() + "# edited\n")
    (r / "README").write_text("docs\n")
    rc, out, ran = run(r, tmp_path)
    assert rc == 0 and ran == ["a"]

    # a change to the module: everything again
    (r / "dm-wow/x.c").write_text("int x2;\n")
    rc, out, ran = run(r, tmp_path)
    assert rc == 0 and len(ran) == 4


def test_killed_run_keeps_what_passed(tmp_path):
    """A session's end kills the run halfway: what passed before is kept
    (with its flush-point count), and the next run does only the rest."""
    r = make_repo(tmp_path)
    rc, out, ran = run(r, tmp_path, kill_at="crash-flush-points-1of2")
    assert rc != 0
    assert ran == ["a", "b"]
    rc, out, ran = run(r, tmp_path)
    assert rc == 0
    assert ran == ["crash-flush-points-1of2", "crash-flush-points-2of2"]
    assert "PASS: vm/a (passed earlier at this tree" in out
    assert "PASS: vm/b (passed earlier at this tree" in out
    assert ("400 flush points checked without a failure on the debug "
            "kernel, in the 2 of 2 flush-point shards") in out


def test_both_campaigns_pass(tmp_path):
    """Both flush-point campaigns, each cut in shards: every shard passing
    is a pass (the count of shards was once one campaign's, and a run
    where all passed failed)."""
    r = make_repo(tmp_path, ("a", "crash-flush-points",
                             "crash-flush-points-large"))
    rc, out, ran = run(r, tmp_path)
    assert rc == 0, out
    assert len(ran) == 5
    assert ("800 flush points checked without a failure on the debug "
            "kernel, in the 4 of 4 flush-point shards") in out


def test_every_campaign_is_sharded(tmp_path):
    """A third campaign (crash-flush-points-tiny) is cut in shards too, and
    counted: named as a plain scenario it ran whole and its pass failed
    the shard count."""
    r = make_repo(tmp_path, ("a", "crash-flush-points",
                             "crash-flush-points-large",
                             "crash-flush-points-tiny"))
    rc, out, ran = run(r, tmp_path)
    assert rc == 0, out
    assert "crash-flush-points-tiny-2of2" in ran
    assert "crash-flush-points-tiny" not in ran
    assert len(ran) == 7
    assert ("1200 flush points checked without a failure on the debug "
            "kernel, in the 6 of 6 flush-point shards") in out


def test_only_runs_what_it_names(tmp_path):
    """WOW_CHECK_DEBUG_ONLY: the flush-point shards alone, reported alone;
    the others run later at the same key."""
    r = make_repo(tmp_path)
    rc, out, ran = run(r, tmp_path, only="^crash-flush-points")
    assert rc == 0, out
    assert sorted(ran) == ["crash-flush-points-1of2",
                           "crash-flush-points-2of2"]
    assert "vm/a" not in out and "vm/b" not in out
    assert "in the 2 of 2 flush-point shards" in out
    rc, out, ran = run(r, tmp_path)
    assert rc == 0 and sorted(ran) == ["a", "b"]
    assert "PASS: vm/crash-flush-points-1of2 (passed earlier" in out
