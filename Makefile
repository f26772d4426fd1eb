# Thin wrapper over CMake.  The two commands the README promises:
#   make demo   install missing Debian packages, configure, build, run the demo
#   make check  same set-up, then every test through ctest but the long ones
# Other targets: make check-long (the tests labelled long: kvm-unit-tests'
# PMU group under several models, the Linux demo under three, hours), make
# fuzz-long (every fuzz target for 10 M executions: test/fuzz/README.md), make
# linux-demo (Debian's kernel and perf under vpmu-run: test/linux/README.md),
# make linux-profile (that kernel profiled from the host by vpmustat, its
# processes named: test/linux/README.md), make bench-linux (the cost of
# profiling that kernel's boot: test/bench/README.md),
# make build, make bench, make install PREFIX=..., make package (the .deb,
# BUILD/libvpmu_VERSION_ARCH.deb: cmake/VpmuPackage.cmake), make clean.
# The library alone: make build CMAKE_FLAGS=-DVPMU_BUILD_EXAMPLES=OFF.

BUILD    ?= build
CC       ?= cc
PREFIX   ?= /usr/local
JOBS     ?= $(shell nproc 2>/dev/null || echo 2)
# CI and `make check` build with warnings as errors.
WERROR   ?= ON
CMAKE_FLAGS ?=

.PHONY: all deps configure build demo check check-long fuzz-long linux-demo linux-profile bench bench-linux install package clean

all: build

deps:
	@sh cmake/deps.sh

configure: deps
	@cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo \
	    -DVPMU_WERROR=$(WERROR) -DCMAKE_INSTALL_PREFIX=$(PREFIX) $(CMAKE_FLAGS) >/dev/null

build: configure
	@sh cmake/build.sh $(BUILD) $(JOBS)

# The host-side hwpmc demo, then a guest under vpmu-run that programs its PMU
# through MSRs and checks its own counts (examples/guests/demo.c); vpmu-run
# prints its host-side table at exit.  Then vpmustat samples the hot-function
# guest (examples/guests/hot.c) and ends with its profile: the top functions
# and the path of the flame graph SVG.  Last, three guests ask for counters
# themselves over the paravirtual channel (vpmu_pv(4)): pmcstat through the
# pmc(3) library, perfmon(4) and pctr(4).  Fails if any part fails; without a
# usable /dev/kvm the guest parts are skipped with a message.
demo: build
	@$(BUILD)/examples/vpmu-demo
	@echo
	@echo "== vpmu-run --source exact $(BUILD)/examples/guests/demo.elf"
	@VPMU_SKIP_NO_KVM=1 $(BUILD)/examples/vpmu-run --source exact \
	    $(BUILD)/examples/guests/demo.elf; st=$$?; \
	if [ $$st -eq 77 ]; then \
		echo "make demo: no usable /dev/kvm: the guest demo is skipped" >&2; st=0; \
	fi; [ $$st -eq 0 ] || exit $$st; \
	echo; \
	echo "== vpmustat -S instructions -n 1009 --svg $(BUILD)/hot.svg $(BUILD)/examples/guests/hot.elf"; \
	VPMU_SKIP_NO_KVM=1 $(BUILD)/examples/vpmustat -S instructions -n 1009 \
	    --svg $(BUILD)/hot.svg $(BUILD)/examples/guests/hot.elf; st=$$?; \
	if [ $$st -eq 77 ]; then \
		echo "make demo: no usable /dev/kvm: the profile is skipped" >&2; st=0; \
	fi; [ $$st -eq 0 ] || exit $$st; \
	for g in pmcstat perfmon pctr; do \
		echo; echo "== vpmu-run --quiet --source exact $(BUILD)/examples/guests/$$g.elf"; \
		VPMU_SKIP_NO_KVM=1 $(BUILD)/examples/vpmu-run --quiet --source exact \
		    $(BUILD)/examples/guests/$$g.elf; st=$$?; \
		if [ $$st -eq 77 ]; then \
			echo "make demo: no usable /dev/kvm: the $$g guest is skipped" >&2; st=0; \
		fi; [ $$st -eq 0 ] || exit $$st; \
	done

check: build
	@cd $(BUILD) && ctest --output-on-failure -j $(JOBS) -LE long

check-long: build
	@cd $(BUILD) && ctest --output-on-failure -L long

# Every fuzz target for 10 M executions (FUZZ_RUNS), in a clang tree of its
# own (test/fuzz/README.md).
fuzz-long: deps
	@sh test/fuzz/long.sh $(BUILD)-fuzz

# Debian's stock kernel with busybox and perf in an initramfs, booted by
# vpmu-run; perf counts and samples on the virtual PMU inside the guest and
# the script checks what it saw (test/linux/README.md).  Status 77: skipped,
# with the reason printed.
linux-demo: build
	@sh test/linux/linux-demo.sh $(BUILD)

# The same kernel profiled from the host: vpmustat samples a kernel-heavy
# workload in /init on cpu-clock, with the kernel's System.map (from
# linux-image-VERSION-dbg) and each sample's guest process; the script
# checks the profile and writes it as SVG, perf script text and pprof
# (test/linux/README.md).  Status 77: skipped, with the reason printed.
linux-profile: build
	@sh test/linux/linux-profile.sh $(BUILD)

bench: build
	@cmake --build $(BUILD) --target bench

bench-linux: build
	@sh test/bench/boot_profile.sh $(BUILD)

install: build
	@cmake --install $(BUILD)

# The Debian package of the build, by CPack: installs under /usr on Debian 12
# with `apt-get install ./FILE.deb`, which brings its dependencies.
package: build
	@cd $(BUILD) && env -u MAKELEVEL -u MAKEFLAGS -u MFLAGS cpack -G DEB >cpack.log 2>&1 || \
	    { cat cpack.log; exit 1; }
	@sed -n "s/^CPack: - package: \(.*\) generated\.$$/\1/p" $(BUILD)/cpack.log

clean:
	@rm -rf $(BUILD)
