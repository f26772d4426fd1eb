# VpmuGuest.cmake -- build freestanding guest programs for vpmu-run.
#
#   vpmu_add_guest(NAME src.c... [DEFINES D=1...] [CFLAGS flag...]
#                  [LINKER_SCRIPT file])
#
# builds ${CMAKE_CURRENT_BINARY_DIR}/NAME.elf from the C sources and the
# guest runtime (crt0.S, runtime.c, <vpmu-guest/runtime.h>) and guest
# library (the channel, pmc(3), the devices, the fast page), linked at
# 1 MiB by link.ld, with the project's C compiler (gcc or clang).  NAME
# becomes a target built by `all`; its ELF path is in the variable NAME_ELF
# (set in the caller's scope) and in the target property VPMU_GUEST_ELF.
# CFLAGS are added after the flags below when NAME's own sources are
# compiled (not the runtime's), so -O0 or -fno-omit-frame-pointer win.
#
# In libvpmu's tree the runtime comes from guest-api/guest/.  Installed, this
# file is in <libdir>/cmake/vpmu and find_package(vpmu) includes it: the
# runtime's sources come from <datadir>/vpmu/guest and the headers from
# <includedir> (the package sets VPMU_GUEST_DIR and VPMU_GUEST_INCLUDE_DIR).
#
# The guest is compiled by custom commands, not add_executable(): no
# CMAKE_C_FLAGS (sanitizers, -fPIE, ...) may reach a freestanding program.
# Flags: -ffreestanding -fno-pic -mno-red-zone -fno-stack-protector
# -mgeneral-regs-only -O2 (the runtime's exception and NMI entry saves the
# general registers only), and the project's warnings; -Werror with
# VPMU_WERROR.  Linked -nostdlib -static (and -no-pie where the driver
# wants it).

if(NOT DEFINED VPMU_GUEST_DIR)
  get_filename_component(VPMU_GUEST_DIR ${CMAKE_CURRENT_LIST_DIR}/../guest-api/guest ABSOLUTE)
  set(VPMU_GUEST_INCLUDE_DIR ${VPMU_GUEST_DIR}/include)
endif()

set(VPMU_GUEST_CFLAGS
  -std=gnu11 -O2 -g -ffreestanding -fno-pic -mno-red-zone -fno-stack-protector
  -mgeneral-regs-only -fno-delete-null-pointer-checks
  -fno-asynchronous-unwind-tables -fno-unwind-tables
  -fcf-protection=none
  -Wall -Wextra -Wshadow -Wstrict-prototypes -Wmissing-prototypes
  -I${VPMU_GUEST_INCLUDE_DIR})
set(VPMU_GUEST_LDFLAGS -nostdlib -static -Wl,--build-id=none -Wl,-z,noexecstack)
if(CMAKE_C_COMPILER_ID STREQUAL "GNU")
  # gcc: no loop turned into a memset/memcpy call inside memset/memcpy.
  list(APPEND VPMU_GUEST_CFLAGS -fno-tree-loop-distribute-patterns)
  # clang warns that -no-pie is unused with -static; gcc needs it (default PIE).
  list(APPEND VPMU_GUEST_LDFLAGS -no-pie)
endif()
if(VPMU_WERROR)
  list(APPEND VPMU_GUEST_CFLAGS -Werror)
endif()

# Compile one guest source to obj, with a depfile for header changes.
function(_vpmu_guest_compile src obj)
  cmake_parse_arguments(C "" "" "DEFINES;CFLAGS" ${ARGN})
  set(defs)
  foreach(d IN LISTS C_DEFINES)
    list(APPEND defs -D${d})
  endforeach()
  get_filename_component(dir ${obj} DIRECTORY)
  add_custom_command(OUTPUT ${obj}
    COMMAND ${CMAKE_COMMAND} -E make_directory ${dir}
    COMMAND ${CMAKE_C_COMPILER} ${VPMU_GUEST_CFLAGS} ${C_CFLAGS} ${defs}
            -MD -MF ${obj}.d -c ${src} -o ${obj}
    DEPENDS ${src}
    DEPFILE ${obj}.d
    COMMENT "Building guest object ${obj}"
    VERBATIM)
endfunction()

function(vpmu_add_guest name)
  cmake_parse_arguments(G "" "LINKER_SCRIPT" "DEFINES;CFLAGS" ${ARGN})
  set(srcs ${G_UNPARSED_ARGUMENTS})
  if(NOT srcs)
    message(FATAL_ERROR "vpmu_add_guest(${name}): no sources")
  endif()
  if(NOT G_LINKER_SCRIPT)
    set(G_LINKER_SCRIPT ${VPMU_GUEST_DIR}/link.ld)
  endif()
  get_filename_component(G_LINKER_SCRIPT ${G_LINKER_SCRIPT} ABSOLUTE)

  # The runtime is compiled for each guest: a custom command's output shared
  # by several targets could be built by two of them at once.
  set(dir ${CMAKE_CURRENT_BINARY_DIR}/${name}.dir)
  _vpmu_guest_compile(${VPMU_GUEST_DIR}/crt0.S ${dir}/vg-crt0.o)
  _vpmu_guest_compile(${VPMU_GUEST_DIR}/runtime.c ${dir}/vg-runtime.o)
  set(objs ${dir}/vg-crt0.o ${dir}/vg-runtime.o)
  # The guest library (vpmu_pv(4)): the channel, pmc(3), the devices, the fast page.
  foreach(part pv pmc dev fastpage)
    _vpmu_guest_compile(${VPMU_GUEST_DIR}/${part}.c ${dir}/vg-${part}.o)
    list(APPEND objs ${dir}/vg-${part}.o)
  endforeach()
  foreach(src IN LISTS srcs)
    get_filename_component(abs ${src} ABSOLUTE)
    get_filename_component(base ${src} NAME_WE)
    set(obj ${dir}/${base}.o)
    _vpmu_guest_compile(${abs} ${obj} DEFINES ${G_DEFINES} CFLAGS ${G_CFLAGS})
    list(APPEND objs ${obj})
  endforeach()

  set(elf ${CMAKE_CURRENT_BINARY_DIR}/${name}.elf)
  add_custom_command(OUTPUT ${elf}
    COMMAND ${CMAKE_C_COMPILER} ${VPMU_GUEST_LDFLAGS} -Wl,-T,${G_LINKER_SCRIPT}
            -o ${elf} ${objs}
    DEPENDS ${objs} ${G_LINKER_SCRIPT}
    COMMENT "Linking guest ${name}.elf"
    VERBATIM)
  add_custom_target(${name} ALL DEPENDS ${elf})
  set_target_properties(${name} PROPERTIES VPMU_GUEST_ELF ${elf})
  set(${name}_ELF ${elf} PARENT_SCOPE)
endfunction()
