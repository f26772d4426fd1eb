# VpmuGuestLib.cmake -- part of libvpmu's own build (not installed).
#
# The guest library on its own, for guests built elsewhere (a guest kernel,
# another VMM's test programs): libvpmu-guest.a, compiled freestanding with
# VpmuGuest.cmake's flags from the channel, pmc(3), device and fast-page
# parts, and installed with <vpmu-guest/*.h> (libvpmu/CMakeLists.txt).  Their
# sources and the vpmu-run runtime (crt0.S, runtime.c, link.ld) are
# installed under <datadir>/vpmu/guest, and VpmuGuest.cmake with the CMake
# package: an installed vpmu_add_guest() compiles them for each guest.
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
# It is installed with the library: building the library (`--target vpmu`)
# builds it too, so installing after building only the library finds it.
add_dependencies(vpmu vpmu_guest_lib)
add_dependencies(vpmu_static vpmu_guest_lib)
install(FILES ${_vg_lib_dir}/libvpmu-guest.a DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(FILES ${VPMU_GUEST_DIR}/pv.c ${VPMU_GUEST_DIR}/pmc.c ${VPMU_GUEST_DIR}/dev.c
  ${VPMU_GUEST_DIR}/fastpage.c ${VPMU_GUEST_DIR}/runtime.c ${VPMU_GUEST_DIR}/crt0.S
  ${VPMU_GUEST_DIR}/link.ld DESTINATION ${CMAKE_INSTALL_DATADIR}/vpmu/guest)
install(FILES ${CMAKE_CURRENT_LIST_DIR}/VpmuGuest.cmake
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/vpmu)
