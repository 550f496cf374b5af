# SPDX-License-Identifier: GPL-2.0 OR MIT
#
# amdgpu UALink: an overlay on Debian's linux-source-7.3.
#
#   make run      boot a guest with a pod of four emulated accelerators and
#                 run a narrated tour of the UALink uAPI
#   make check    all four test tiers; ends with "N passed, N failed, N skipped"
#   make pod-test a pod across two guest kernels sharing an ivshmem region:
#                 export, import, access, one guest killed and booted again
#                 (the fourth tier of check)
#   make fuzz     the stateful uAPI fuzzer alone in the debug guest
#                 (FUZZ_SECONDS=600, FUZZ_SEED= to replay)
#   make bench    the uAPI's figures from a non-debug guest with 1,024
#                 accelerators (not a test: prints figures)
#   make kcsan    the data-race detector (KCSAN guest) on the KUnit suites
#                 and the IGT programs (not part of check)
#
# Both begin by installing whatever is missing (make deps) and preparing the
# kernel tree (make tree). Everything built lives in UALINK_WORK
# (default /var/tmp/ualink), outside this work tree, and is reused.

UALINK_WORK ?= /var/tmp/ualink
export UALINK_WORK
TREE := $(UALINK_WORK)/linux
T := tooling

.PHONY: all run check deps tree kunit amdgpu vm-kernel vm-test pod-test igt fuzz kcsan bench series-check format-patch help

# Everything that touches UALINK_WORK runs under one lock: two runs at once
# (CI and a developer, say) would rewrite each other's tree and results.
LOCKED = mkdir -p $(UALINK_WORK) && flock $(UALINK_WORK)/.lock sh -c
PREP = $(T)/prepare-tree.sh . $(TREE)

all: help

help:
	@sed -n 's/^#   //p' Makefile

deps:
	@$(T)/deps.sh

tree: deps
	@$(LOCKED) '$(PREP)'

run: deps
	@$(LOCKED) '$(PREP) && $(T)/run.sh'

check: deps
	@$(LOCKED) '$(PREP) && $(T)/check.sh'

# The tiers one at a time.
kunit: deps
	@$(LOCKED) '$(PREP) && $(T)/kunit-uml.sh'

amdgpu: deps
	@$(LOCKED) '$(PREP) && $(T)/amdgpu-check.sh'

vm-kernel: deps
	@$(LOCKED) '$(PREP) && $(T)/vm-kernel.sh'

vm-test: deps
	@$(LOCKED) '$(PREP) && $(T)/vm-test.sh'

# A pod across two guest kernels: kill one, boot it again (part of check).
pod-test: deps
	@$(LOCKED) '$(PREP) && $(T)/pod-test.sh'

igt: deps
	@$(LOCKED) '$(PREP) && $(MAKE) -s -C tests/igt OUT=$(UALINK_WORK)/out/igt'

# Every commit of the series builds what it adds (also in check; cold 43
# minutes, warm about 8.5).
series-check: deps
	@$(LOCKED) '$(PREP) && $(T)/series-check.sh'

# The fuzzer for as long as asked (check runs it for a short budget).
fuzz: deps
	@$(LOCKED) '$(PREP) && FUZZ_SECONDS=$(FUZZ_SECONDS) FUZZ_SEED=$(FUZZ_SEED) $(T)/fuzz.sh'

# The data-race detector on the KUnit suites and the IGT programs (not
# part of check: its own kernel, some 15 minutes cold).
kcsan: deps
	@$(LOCKED) '$(PREP) && $(T)/kcsan.sh'

# Figures, not tests: the benchmark guest (not part of check).
bench: deps
	@$(T)/deps.sh bench
	@$(LOCKED) '$(PREP) && $(T)/bench.sh'

# The upstream series, as whoever runs it (git's user.name and user.email):
# v$(V) (default 1) with a cover letter in $(UALINK_WORK)/series.
format-patch: deps
	@$(LOCKED) '$(PREP) && V=$(V) $(T)/format-patch.sh'
