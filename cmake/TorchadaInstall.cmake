# cmake --install: the shim, the simulator, a CMake package config and a pkg-config file, both
# relocatable (paths computed from the installed file's own location, never the configure-time
# prefix), so `cmake --install build --prefix ANY` and a moved or unpacked tree work.
include(CMakePackageConfigHelpers)
set(TORCHADA_INSTALL_CMAKEDIR ${CMAKE_INSTALL_LIBDIR}/cmake/torchada)
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/torchadaConfig.cmake.in
  ${PROJECT_BINARY_DIR}/torchadaConfig.cmake INSTALL_DESTINATION ${TORCHADA_INSTALL_CMAKEDIR}
  PATH_VARS CMAKE_INSTALL_LIBDIR CMAKE_INSTALL_BINDIR)
write_basic_package_version_file(${PROJECT_BINARY_DIR}/torchadaConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/torchadaConfig.cmake ${PROJECT_BINARY_DIR}/torchadaConfigVersion.cmake
  DESTINATION ${TORCHADA_INSTALL_CMAKEDIR})

# torchada.pc goes to <libdir>/pkgconfig: the prefix is that directory's way back up
# (lib/pkgconfig -> ../.., lib/x86_64-linux-gnu/pkgconfig -> ../../..). An absolute
# CMAKE_INSTALL_LIBDIR / BINDIR stays absolute.
function(_torchada_pc_path out dir)
  if(IS_ABSOLUTE "${dir}")
    set(${out} "${dir}" PARENT_SCOPE)
  else()
    set(${out} "\${prefix}/${dir}" PARENT_SCOPE)
  endif()
endfunction()
if(IS_ABSOLUTE "${CMAKE_INSTALL_LIBDIR}")
  set(TORCHADA_PC_PREFIX_FROM_PCDIR "..")  # libdir is absolute: prefix is not used for it
else()
  file(RELATIVE_PATH TORCHADA_PC_PREFIX_FROM_PCDIR "/p/${CMAKE_INSTALL_LIBDIR}/pkgconfig" "/p")
  string(REGEX REPLACE "/$" "" TORCHADA_PC_PREFIX_FROM_PCDIR "${TORCHADA_PC_PREFIX_FROM_PCDIR}")
endif()
_torchada_pc_path(TORCHADA_PC_LIBDIR "${CMAKE_INSTALL_LIBDIR}")
_torchada_pc_path(TORCHADA_PC_BINDIR "${CMAKE_INSTALL_BINDIR}")
configure_file(${PROJECT_SOURCE_DIR}/cmake/torchada.pc.in ${PROJECT_BINARY_DIR}/torchada.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/torchada.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
