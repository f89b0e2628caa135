# cmake --install: the shim, the simulator, a CMake package config and a pkg-config file.
include(CMakePackageConfigHelpers)
set(TORCHADA_INSTALL_CMAKEDIR ${CMAKE_INSTALL_LIBDIR}/cmake/torchada)
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/torchadaConfig.cmake.in
  ${PROJECT_BINARY_DIR}/torchadaConfig.cmake INSTALL_DESTINATION ${TORCHADA_INSTALL_CMAKEDIR})
write_basic_package_version_file(${PROJECT_BINARY_DIR}/torchadaConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/torchadaConfig.cmake ${PROJECT_BINARY_DIR}/torchadaConfigVersion.cmake
  DESTINATION ${TORCHADA_INSTALL_CMAKEDIR})
configure_file(${PROJECT_SOURCE_DIR}/cmake/torchada.pc.in ${PROJECT_BINARY_DIR}/torchada.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/torchada.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
