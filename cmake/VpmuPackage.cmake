# VpmuPackage.cmake -- the Debian package, made by CPack (`make package`,
# i.e. `cmake --build BUILD --target package`): BUILD/libvpmu_VERSION_ARCH.deb.
#
# One package, libvpmu, with what `cmake --install` installs, under /usr:
# libvpmu.so.N and libvpmu.a, the headers, the guest side, vpmu.pc, the
# CMake package, the manual pages and (with VPMU_BUILD_EXAMPLES) the tools,
# which find the packaged libvpmu.so.N through their RUNPATH
# (examples/CMakeLists.txt).  Its Depends are what dpkg-shlibdeps finds the
# binaries need (libc6, libcpuid16, libzydis4, and the tools' libpfm4,
# libelf1, zlib1g, liblzma5, libzstd1), so `apt-get install ./libvpmu_*.deb`
# on a clean Debian 12 brings them.  libvpmu.a's own link dependencies are
# Suggests: nothing a consumer of the shared library needs.
#
# test/package/ checks the package (package_deb) and installs it on a
# clean Debian 12 made by debootstrap (package_deb_clean_debian, long).

set(VPMU_PACKAGE_MAINTAINER
  "libvpmu maintainers <maintainers@users.noreply.a-seed-29b0ae99.example>"
  CACHE STRING "The Maintainer field of the .deb (make package)")

# Debian's policy: the copyright file in /usr/share/doc/PACKAGE.
install(FILES ${PROJECT_SOURCE_DIR}/LICENSE
  DESTINATION ${CMAKE_INSTALL_DATAROOTDIR}/doc/libvpmu RENAME copyright)

set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME libvpmu)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_VENDOR "the libvpmu developers")
set(CPACK_PACKAGE_CONTACT "${VPMU_PACKAGE_MAINTAINER}")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "${PROJECT_DESCRIPTION}")
set(CPACK_PACKAGE_DESCRIPTION
"libvpmu is a C library for the host side of a KVM-based virtual machine
monitor that gives guests a virtual PMU: performance monitoring counters a
guest can count and sample with, implemented by the VMM rather than by host
hardware, with FreeBSD hwpmc(4) semantics, on pluggable host counter sources
(synthetic, perf_event_open, and exact counts from single-step exits).

This package holds the shared and static libraries, the headers, the
pkg-config file and CMake package, the guest runtime and guest library, the
manual pages, and the tools: vpmu-run (a small VMM that boots a guest with a
virtual PMU), vpmustat (pmcstat for a guest: counts, samples, flame graphs),
vpmu-info (what the host offers), vpmu-demo and vpmu-qemu.")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_STRIP_FILES ON)

set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION devel)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
# A shlibs file for libvpmu.so.N, so packages built against it depend on it.
set(CPACK_DEBIAN_PACKAGE_GENERATE_SHLIBS ON)
set(CPACK_DEBIAN_PACKAGE_GENERATE_SHLIBS_POLICY ">=")
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION ON)
# What linking libvpmu.a (pkg-config --static, vpmu::vpmu_static) takes.
set(CPACK_DEBIAN_PACKAGE_SUGGESTS "pkg-config, libcpuid-dev, libzydis-dev")

# `make package_source` (not the .deb): the tree without build trees or .git.
set(CPACK_SOURCE_GENERATOR TGZ)
set(CPACK_SOURCE_IGNORE_FILES "/\\.git/" "/build[^/]*/")

include(CPack)
