# vpmu-run's ELF, Multiboot and bzImage loaders (fuzz_loader.c), with the
# decompressors vpmu-run is built with where their libraries are there.
set(vr ${PROJECT_SOURCE_DIR}/examples/vpmu-run)
vpmu_fuzz(loader SOURCES fuzz_loader.c ${vr}/elf.c ${vr}/multiboot.c ${vr}/linux.c
  INCLUDES ${vr} LIBS vpmu_static SEED loader_seed)
find_package(PkgConfig REQUIRED)
pkg_check_modules(FUZZ_LZMA IMPORTED_TARGET liblzma)
pkg_check_modules(FUZZ_ZLIB IMPORTED_TARGET zlib)
pkg_check_modules(FUZZ_ZSTD IMPORTED_TARGET libzstd)
foreach(lib LZMA ZLIB ZSTD)
  if(FUZZ_${lib}_FOUND)
    target_compile_definitions(fuzz_loader PRIVATE VR_HAVE_${lib})
    target_link_libraries(fuzz_loader PRIVATE PkgConfig::FUZZ_${lib})
  endif()
endforeach()
