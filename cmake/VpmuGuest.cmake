# VpmuGuest.cmake -- build freestanding guest programs for vpmu-run.
#
#   vpmu_add_guest(NAME src.c... [DEFINES D=1...] [LINKER_SCRIPT file])
#
# builds ${CMAKE_CURRENT_BINARY_DIR}/NAME.elf from the C sources and the
# guest runtime (guest-api/guest/: crt0.S, runtime.c, <vpmu-guest/runtime.h>),
# linked at 1 MiB by guest-api/guest/link.ld, with the project's C compiler
# (gcc or clang).  NAME becomes a target built by `all`; its ELF path is in
# the variable NAME_ELF (set in the caller's scope) and in the target
# property VPMU_GUEST_ELF.
#
# The guest is compiled by custom commands, not add_executable(): no
# CMAKE_C_FLAGS (sanitizers, -fPIE, ...) may reach a freestanding program.
# Flags: -ffreestanding -fno-pic -mno-red-zone -fno-stack-protector
# -mgeneral-regs-only -O2 (the runtime's exception and NMI entry saves the
# general registers only), and the project's warnings; -Werror with
# VPMU_WERROR.  Linked -nostdlib -static (and -no-pie where the driver
# wants it).

set(VPMU_GUEST_DIR ${CMAKE_CURRENT_LIST_DIR}/../guest-api/guest)
get_filename_component(VPMU_GUEST_DIR ${VPMU_GUEST_DIR} ABSOLUTE)

set(VPMU_GUEST_CFLAGS
  -std=gnu11 -O2 -g -ffreestanding -fno-pic -mno-red-zone -fno-stack-protector
  -mgeneral-regs-only -fno-delete-null-pointer-checks
  -fno-asynchronous-unwind-tables -fno-unwind-tables
  -fcf-protection=none
  -Wall -Wextra -Wshadow -Wstrict-prototypes -Wmissing-prototypes
  -I${VPMU_GUEST_DIR}/include)
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
  cmake_parse_arguments(C "" "" "DEFINES" ${ARGN})
  set(defs)
  foreach(d IN LISTS C_DEFINES)
    list(APPEND defs -D${d})
  endforeach()
  get_filename_component(dir ${obj} DIRECTORY)
  add_custom_command(OUTPUT ${obj}
    COMMAND ${CMAKE_COMMAND} -E make_directory ${dir}
    COMMAND ${CMAKE_C_COMPILER} ${VPMU_GUEST_CFLAGS} ${defs}
            -MD -MF ${obj}.d -c ${src} -o ${obj}
    DEPENDS ${src}
    DEPFILE ${obj}.d
    COMMENT "Building guest object ${obj}"
    VERBATIM)
endfunction()

function(vpmu_add_guest name)
  cmake_parse_arguments(G "" "LINKER_SCRIPT" "DEFINES" ${ARGN})
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
    _vpmu_guest_compile(${abs} ${obj} DEFINES ${G_DEFINES})
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

# The guest library on its own, for guests built elsewhere (a guest kernel,
# another VMM's test programs): libvpmu-guest.a, compiled freestanding with
# the flags above from the channel, pmc(3), device and fast-page parts, and
# installed with <vpmu-guest/*.h> (libvpmu/CMakeLists.txt).  Their sources and
# the vpmu-run runtime (crt0.S, runtime.c, link.ld) are installed too, under
# share/vpmu/guest, for a guest that wants other flags.
set(_vg_lib_dir ${CMAKE_BINARY_DIR}/vpmu-guest-lib)
set(_vg_lib_objs)
foreach(part pv pmc dev fastpage)
  _vpmu_guest_compile(${VPMU_GUEST_DIR}/${part}.c ${_vg_lib_dir}/${part}.o)
  list(APPEND _vg_lib_objs ${_vg_lib_dir}/${part}.o)
endforeach()
add_custom_command(OUTPUT ${_vg_lib_dir}/libvpmu-guest.a
  COMMAND ${CMAKE_COMMAND} -E rm -f ${_vg_lib_dir}/libvpmu-guest.a
  COMMAND ${CMAKE_AR} qcs ${_vg_lib_dir}/libvpmu-guest.a ${_vg_lib_objs}
  DEPENDS ${_vg_lib_objs}
  COMMENT "Archiving the guest library libvpmu-guest.a"
  VERBATIM)
add_custom_target(vpmu_guest_lib ALL DEPENDS ${_vg_lib_dir}/libvpmu-guest.a)
install(FILES ${_vg_lib_dir}/libvpmu-guest.a DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(FILES ${VPMU_GUEST_DIR}/pv.c ${VPMU_GUEST_DIR}/pmc.c ${VPMU_GUEST_DIR}/dev.c
  ${VPMU_GUEST_DIR}/fastpage.c ${VPMU_GUEST_DIR}/runtime.c ${VPMU_GUEST_DIR}/crt0.S
  ${VPMU_GUEST_DIR}/link.ld DESTINATION ${CMAKE_INSTALL_DATADIR}/vpmu/guest)
