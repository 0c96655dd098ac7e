#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Check the module's structure rules (Documentation/design.rst, Structure).

1. One owner per field: every field of struct wow_cache stands in a
   section of dm-wow.h headed "owner: <part>", and only that part's files
   write it (assign, increment, or pass its address to an initialiser, a
   list or bio_list operation, a mempool or bio_set call).  Reading
   another part's fields is allowed; writing goes through the owner's
   functions.  (The opaque parts are the compiler's to check, not this
   script's: the segment table, struct wow_segs and struct wow_segment,
   defined in dm-wow-seg.c alone, destage's state, struct wow_destage,
   in dm-wow-destage.c alone, cleaning's, struct wow_clean, in
   dm-wow-clean.c alone, the checkpoints', struct wow_ckptlog, in
   dm-wow-ckptlog.c alone, and group commit's, struct wow_commit, in
   dm-wow-log.c alone.)
2. No call cycle between files: the graph of calls from one file to a
   function another file defines has no cycle.
3. A function whose comment says it runs with the lock held ("lock held")
   asserts it: lockdep_assert_held() stands in its body.  ("lock held or
   recovering" marks a function recovery also calls, before the device is
   live, without the lock.)

Usage: ownership.py [DIR]   (default: dm-wow/ beside this script's repo)
Prints each violation and exits 1 when there is one.
"""
import collections
import os
import re
import sys

PARTS = {
    'target': ['dm-wow-target.c'],
    'core': ['dm-wow-core.c', 'dm-wow-index.c'],
    'log': ['dm-wow-log.c', 'dm-wow-seg.c', 'dm-wow-ckptlog.c',
            'dm-wow-recover.c'],
    'destage': ['dm-wow-destage.c'],
    'clean': ['dm-wow-clean.c'],
}
# a counter (atomic64_t): each part counts what it does
ANY = 'any'

# (a call to a wow_ function passes the struct to its own module's API)
MUTATORS = (r'INIT_\w+|(?!wow_)\w*_init\w*|init_\w+|list_(?:add|del|splice|move|'
            r'replace)\w*|bio_list_(?:add|pop|merge|init)\w*|mempool_\w+|'
            r'bioset_\w+|atomic\w*_(?:set|inc|dec|add|sub|xchg|cmpxchg)\w*|'
            r'memset|memcpy|strscpy|get_random_bytes')
ASSIGN = r'(?:=(?!=)|\+=|-=|\|=|&=|\^=|<<=|>>=|\+\+|--)'


def strip_comments(s):
    s = re.sub(r'/\*.*?\*/', lambda m: '\n' * m.group(0).count('\n'), s,
               flags=re.S)
    s = re.sub(r'//[^\n]*', '', s)
    return re.sub(r'"(?:\\.|[^"\\])*"', '""', s)


def struct_owners(header, name):
    """Field -> owner for struct @name, from its "owner: part" sections."""
    m = re.search(r'^struct %s \{\n(.*?)^\};' % name, header, re.S | re.M)
    if not m:
        raise SystemExit('ownership: no struct %s in dm-wow.h' % name)
    owners, owner, missing = {}, None, []
    for line in m.group(1).split('\n'):
        o = re.search(r'owner:\s*(\w+)', line)
        if o:
            owner = o.group(1)
            continue
        body = strip_comments(line).strip()
        f = re.match(r'[\w\s\*]+?[\s\*](\w+)(?:\[[^\]]*\])?\s*(?::\s*\d+)?;$',
                     body)
        if not f:
            continue
        if owner is None:
            missing.append(f.group(1))
        owners[f.group(1)] = owner
    return owners, missing


def writes(src, ptr, fields):
    """(field, line) for each write through @ptr (a regex) to @fields."""
    out = []
    for f in fields:
        pats = [r'\b%s->%s\b(?:\.\w+|\[[^\]]*\])*\s*%s' % (ptr, f, ASSIGN),
                r'(?:\+\+|--)\s*%s->%s\b' % (ptr, f),
                r'\b(?:%s)\(\s*&\s*%s->%s\b' % (MUTATORS, ptr, f)]
        for p in pats:
            for m in re.finditer(p, src):
                out.append((f, src.count('\n', 0, m.start()) + 1))
    return out


def check_owners(d, header, files):
    bad = []
    wc, missing = struct_owners(header, 'wow_cache')
    for f in missing:
        bad.append('dm-wow.h: field %s stands in no "owner:" section' % f)
    part_of = {f: p for p, fs in PARTS.items() for f in fs}
    for name, src in files.items():
        part = part_of.get(name)
        for f, line in writes(src, r'wc', wc):
            owner = wc.get(f)
            if owner in (ANY, None) and f in wc:
                continue
            if part is None or owner != part:
                bad.append('%s:%d: writes %s, owned by %s' %
                           (name, line, f, owner))
    return bad


def check_cycles(files):
    defs = {}
    for name, src in files.items():
        for m in re.finditer(r'^(?!static)[a-z][^\n;{]*?\b(wow_\w+)\(', src,
                             re.M):
            defs[m.group(1)] = name
    graph = collections.defaultdict(set)
    for name, src in files.items():
        for fn, where in defs.items():
            if where != name and re.search(r'\b%s\(' % fn, src):
                graph[name].add(where)
    bad, state = [], {}

    def visit(n, path):
        state[n] = 1
        for m in sorted(graph[n]):
            if state.get(m) == 1:
                cyc = path[path.index(m):] + [m]
                bad.append('call cycle: ' + ' -> '.join(cyc))
            elif not state.get(m):
                visit(m, path + [m])
        state[n] = 2
    for n in sorted(files):
        if not state.get(n):
            visit(n, [n])
    return bad


def check_lock_asserts(raw):
    bad = []
    for name, src in raw.items():
        for m in re.finditer(r'/\*((?:(?!\*/).)*?)\*/\n((?:static )?'
                             r'[^\n;{]*\b(\w+)\([^)]*\)[^;{]*)\{\n', src,
                             re.S):
            com = ' '.join(m.group(1).replace('*', ' ').split())
            if not re.search(r'[Ll]ock held', com) or \
                    re.search(r'[Ll]ock not held|[Ll]ock held,? or', com):
                continue
            end = src.index('\n}\n', m.end())
            if 'lockdep_assert_held' not in src[m.end():end]:
                bad.append('%s:%d: %s() says "lock held" but does not '
                           'assert it' % (name, src.count('\n', 0, m.start(3))
                                          + 1, m.group(3)))
    return bad


def main():
    d = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
        os.path.dirname(os.path.abspath(__file__)), '..', 'dm-wow')
    header = open(os.path.join(d, 'dm-wow.h')).read()
    files, raw = {}, {}
    for n in sorted(os.listdir(d)):
        if re.match(r'dm-wow-[\w-]+\.c$', n) and not n.endswith('.mod.c'):
            raw[n] = open(os.path.join(d, n)).read()
            files[n] = strip_comments(raw[n])
    bad = check_owners(d, header, files) + check_cycles(files) + \
        check_lock_asserts(raw)
    for b in bad:
        print(b)
    print('ownership: %d files, %d violations' % (len(files), len(bad)))
    return 1 if bad else 0


if __name__ == '__main__':
    sys.exit(main())
