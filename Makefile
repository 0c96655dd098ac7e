# SPDX-License-Identifier: GPL-2.0
#
# dm-wow top level.  `make demo` and `make check` are the two commands a new
# user needs; both install what is missing first (scripts/setup.sh).

KV      ?= $(shell scripts/kver.sh 2>/dev/null)
KDIR    ?= /lib/modules/$(KV)/build
WOW_CACHE ?= $(or $(XDG_CACHE_HOME),$(HOME)/.cache)/dm-wow
PYTHON  ?= /usr/bin/python3
export KV KDIR WOW_CACHE PYTHON

# make install / uninstall: wowctl, wowtab, man pages, the systemd generator,
# the udev rules and wow-probe (userspace/Makefile: PREFIX, SBINDIR, MANDIR,
# UDEVDIR, GENERATORDIR), and the module's sources in
# $(DESTDIR)/usr/src/dm-wow-$(VERSION) with DKMS building and installing it
# (scripts/dkms-module.sh: DKMS_KERNELS, NO_DKMS; with DESTDIR, sources only).
PREFIX  ?= /usr/local
DESTDIR ?=
VERSION := $(shell cat dm-wow/VERSION)
export PREFIX DESTDIR

.PHONY: all module userspace clean setup check demo kunit vmtest shell deb \
	checkpatch bench bench-quick bench-raid check-debug debug-kernel soak \
	test-userspace test-bench-tools test-kunit test-vm test-style \
	test-vm-debug test-vm612 test-vm-systemd check-large install uninstall \
	test-vm72 test-vm73 test-vm-deb \
	install-module install-userspace uninstall-module uninstall-userspace \
	version

all: module userspace

module:
	$(MAKE) -C $(KDIR) M=$(CURDIR)/dm-wow WOW_WERROR=1 modules

userspace:
	$(MAKE) -C userspace

install: install-module install-userspace

install-module:
	@scripts/dkms-module.sh install

install-userspace:
	$(MAKE) -C userspace install

uninstall: uninstall-userspace uninstall-module

uninstall-module:
	@scripts/dkms-module.sh uninstall

uninstall-userspace:
	$(MAKE) -C userspace uninstall

version:
	@echo $(VERSION)

# Debian packages: dm-wow-dkms (all) and wowctl, built with debhelper and
# dh-dkms from a copy of the tree into results/deb/, then lintian
# (scripts/deb.sh; DEB_VERSION=V for a rebuild under a newer version)
deb: setup
	@scripts/deb.sh

clean:
	-$(MAKE) -C $(KDIR) M=$(CURDIR)/dm-wow clean
	-$(MAKE) -C userspace clean

setup:
	@scripts/setup.sh

# Every suite; the last line is "N passed, N failed, N skipped".
check: setup
	@$(MAKE) --no-print-directory all KV=$$(scripts/kver.sh) KDIR=/lib/modules/$$(scripts/kver.sh)/build
	@scripts/check.sh

demo: setup
	@$(MAKE) --no-print-directory all KV=$$(scripts/kver.sh) KDIR=/lib/modules/$$(scripts/kver.sh)/build
	@tests/vm/demo.sh

kunit: setup test-kunit

# Every VM scenario on the debug kernel (KASAN, lockdep, KFENCE, kmemleak, ...;
# tests/vm/debug.config), built once into $(WOW_CACHE)/debug-kernel, with
# WOW_PROFILE=full.  Not part of `make check`: with 1,000 flush points it
# needs hours of both cores (Documentation/reliability.md, "Debug kernel").
# Same summary line as `make check`.
check-debug: setup
	@$(MAKE) --no-print-directory all KV=$$(scripts/kver.sh) KDIR=/lib/modules/$$(scripts/kver.sh)/build
	@scripts/check.sh vm-debug

# Build (or find) the debug kernel and dm-wow.ko for it; print their paths.
debug-kernel:
	@tests/vm/debug-kernel.sh kernel
	@tests/vm/debug-kernel.sh module

# make soak [DURATION=10m] [KERNEL=debian|debug] [SOAK_SEED=N]
#           [SOAK_CORRUPT=device|origin]  (scripts/soak.sh, tests/vm/soak.sh)
DURATION ?= 10m
KERNEL   ?= debian
soak: all
	@DURATION=$(DURATION) KERNEL=$(KERNEL) scripts/soak.sh

vmtest: setup all test-vm

# Boot a VM with the module and tools and give a shell on the console.
shell: all
	@tests/vm/wowvm.py shell

checkpatch: test-style

test-style:
	@scripts/checkpatch.sh

test-userspace: userspace
	@$(MAKE) --no-print-directory -C userspace test

test-bench-tools:
	@cd scripts && $(PYTHON) -m pytest -q -p no:cacheprovider tests

test-kunit:
	@tests/kunit/run.sh

# Two VMs at a time (a TCG guest keeps about one host core busy), longest
# boot group first; WOW_VM_JOBS=N to change it.
test-vm: all
	@tests/vm/wowvm.py run --jobs $${WOW_VM_JOBS:-2} tests/scenarios/*.sh

# Boot-time assembly with systemd as PID 1: /etc/wowtab, the generator, the
# udev rules and an fstab mount by UUID over three boots
# (tests/vm/systemd-vm.py; BREAK=before|rules breaks the install on purpose,
# and then it must fail).
test-vm-systemd: all
	@tests/vm/systemd-vm.py $(if $(BREAK),--break $(BREAK))

# The scenarios too large for make check (a 1 TiB cache: 8 GiB VM, minutes).
check-large: setup all
	@tests/vm/wowvm.py run --env WOW_LARGE=1 tests/scenarios/cache-1t.sh \
		tests/scenarios/checkpoint-stall.sh

# The second kernel (6.12): dm-wow built for it, a smoke subset booted on it.
test-vm612: userspace
	@tests/vm/kernel2.sh smoke

# Today's kernels: Debian 13's trixie-backports 7.2 and 7.3, taken apart
# without installing them (tests/vm/kernel-bpo.sh, cached under
# $(WOW_CACHE)/kernel-bpo), dm-wow built for each and vm612's smoke subset
# booted on it.
test-vm72: userspace
	@tests/vm/kernel-bpo.sh smoke 7.2

test-vm73: userspace
	@tests/vm/kernel-bpo.sh smoke 7.3

# make deb's packages installed, upgraded and purged with apt in a VM with
# systemd as PID 1 (tests/vm/deb-vm.py; BREAK=dkms breaks the module
# package on purpose, and then it must fail)
test-vm-deb: userspace
	@tests/vm/deb-vm.py $(if $(BREAK),--break $(BREAK))

test-vm-debug: userspace
	@tests/vm/check-debug.sh

# make bench RESUME=results/bench/<time>: go on with a run cut short
bench: setup
	@scripts/bench.py $(if $(RESUME),--resume $(RESUME),--full)

bench-quick: setup
	@scripts/bench.py --quick

# the WOW paper's experiments on md RAID-5 and RAID-10 of live 10K rpm
# disks (about two hours; Documentation/benchmarks.md)
bench-raid: setup
	@scripts/bench.py $(if $(RESUME),--resume $(RESUME),--raid)
