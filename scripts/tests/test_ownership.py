# SPDX-License-Identifier: GPL-2.0
"""scripts/ownership.py: the module as it stands passes; each kind of
violation, planted in a copy, is caught."""
import os
import shutil
import subprocess
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
TOOL = os.path.join(HERE, '..', 'ownership.py')
SRC = os.path.join(HERE, '..', '..', 'dm-wow')


def run(d):
    p = subprocess.run([sys.executable, TOOL, d], capture_output=True,
                       text=True)
    return p.returncode, p.stdout


def copy(tmp_path):
    d = tmp_path / 'dm-wow'
    shutil.copytree(SRC, d, ignore=shutil.ignore_patterns('*.o', '*.ko',
                                                          'tests'))
    return d


def plant(d, name, after, text):
    f = d / name
    s = f.read_text()
    assert after in s, after
    f.write_text(s.replace(after, after + text, 1))


def test_module_passes():
    rc, out = run(SRC)
    assert rc == 0, out
    assert ', 0 violations' in out


def test_write_to_another_parts_field(tmp_path):
    d = copy(tmp_path)
    plant(d, 'dm-wow-target.c', '\twc->last_io = jiffies;\n',
          '\twc->dirty_blocks = 0;\n')
    rc, out = run(str(d))
    assert rc == 1
    assert 'writes dirty_blocks, owned by log' in out


def test_init_of_another_parts_work(tmp_path):
    d = copy(tmp_path)
    plant(d, 'dm-wow-target.c', '\twc->last_io = jiffies;\n',
          '\tINIT_WORK(&wc->health_work, NULL);\n')
    rc, out = run(str(d))
    assert rc == 1 and 'writes health_work, owned by core' in out


def opaque(src, owner, defs):
    """The structs @defs open with are defined in @owner alone: a header
    or another .c that defined them again would open them to every file
    that includes it."""
    text = open(os.path.join(src, owner)).read()
    assert all(x in text for x in defs), owner
    for name in sorted(os.listdir(src)):
        if name.endswith('.h') or (name.endswith('.c') and name != owner):
            text = open(os.path.join(src, name)).read()
            assert not any(x in text for x in defs), name


def test_segment_table_is_opaque():
    # the compiler enforces the segment table's ownership (ownership.py
    # has no rule for it)
    opaque(SRC, 'dm-wow-seg.c', ('struct wow_segment {', 'struct wow_segs {'))


def test_destage_is_opaque():
    # destage's state: the compiler enforces it; what stays in struct
    # wow_cache (stopped, thresh, destage_work) ownership.py checks
    opaque(SRC, 'dm-wow-destage.c', ('struct wow_destage {',))


def test_clean_is_opaque():
    # cleaning's state: the compiler enforces it (struct wow_cache keeps
    # only the pointer)
    opaque(SRC, 'dm-wow-clean.c', ('struct wow_clean {',))


def test_ckptlog_is_opaque():
    # the checkpoints' state and the run being written: the compiler
    # enforces it (struct wow_cache keeps the pointer and chain_next)
    opaque(SRC, 'dm-wow-ckptlog.c', ('struct wow_ckptlog {',
                                     'struct ckpt_run {'))


def test_commit_is_opaque():
    # group commit's state and the record being written: the compiler
    # enforces it (struct wow_cache keeps the pointer and the worker)
    opaque(SRC, 'dm-wow-log.c', ('struct wow_commit {', 'struct wow_batch {'))


def test_opaque_catches_a_definition_in_a_header(tmp_path):
    d = copy(tmp_path)
    plant(d, 'dm-wow-destage.h', 'struct wow_destage;\n',
          'struct wow_destage {\n\tu32 runs_inflight;\n};\n')
    with pytest.raises(AssertionError, match='dm-wow-destage.h'):
        opaque(str(d), 'dm-wow-destage.c', ('struct wow_destage {',))


def test_field_with_no_owner(tmp_path):
    d = copy(tmp_path)
    plant(d, 'dm-wow.h', 'struct wow_cache {\n', '\tu32 orphan;\n')
    rc, out = run(str(d))
    assert rc == 1 and 'field orphan stands in no "owner:" section' in out


def test_call_cycle(tmp_path):
    d = copy(tmp_path)
    plant(d, 'dm-wow-log.c', 'void wow_log_stop(struct wow_cache *wc)\n{\n',
          '\twow_clean_starved(wc);\n')
    rc, out = run(str(d))
    assert rc == 1
    assert 'call cycle: dm-wow-clean.c -> dm-wow-log.c -> dm-wow-clean.c' \
        in out


def test_comments_do_not_count(tmp_path):
    d = copy(tmp_path)
    plant(d, 'dm-wow-log.c', 'void wow_log_stop(struct wow_cache *wc)\n{\n',
          '\t/* wow_clean_starved(wc); wc->dirty_blocks = 0; */\n')
    rc, out = run(str(d))
    assert rc == 0, out


def test_lock_held_without_assert(tmp_path):
    d = copy(tmp_path)
    f = d / 'dm-wow-destage.c'
    s = f.read_text()
    i = s.index('static u32 runs_busy(')
    j = s.index('lockdep_assert_held(&wc->lock);', i)
    f.write_text(s[:j] + s[j + len('lockdep_assert_held(&wc->lock);'):])
    rc, out = run(str(d))
    assert rc == 1
    assert 'runs_busy() says "lock held" but does not assert it' in out
