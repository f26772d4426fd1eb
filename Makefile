# Thin wrapper over CMake.  The two commands the README promises:
#   make demo   install missing Debian packages, configure, build, run the demo
#   make check  same set-up, then every test through ctest
# Other targets: make build, make bench, make install PREFIX=..., make clean.

BUILD    ?= build
CC       ?= cc
PREFIX   ?= /usr/local
JOBS     ?= $(shell nproc 2>/dev/null || echo 2)
# CI and `make check` build with warnings as errors.
WERROR   ?= ON
CMAKE_FLAGS ?=

.PHONY: all deps configure build demo check bench install clean

all: build

deps:
	@sh cmake/deps.sh

configure: deps
	@cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo \
	    -DVPMU_WERROR=$(WERROR) -DCMAKE_INSTALL_PREFIX=$(PREFIX) $(CMAKE_FLAGS) >/dev/null

build: configure
	@cmake --build $(BUILD) -j $(JOBS)

demo: build
	@$(BUILD)/examples/vpmu-demo

check: build
	@cd $(BUILD) && ctest --output-on-failure -j $(JOBS)

bench: build
	@cmake --build $(BUILD) --target bench

install: build
	@cmake --install $(BUILD)

clean:
	@rm -rf $(BUILD)
