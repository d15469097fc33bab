# nvsvp_platform_library(NAME [PUBLIC deps...] [PRIVATE deps...]): the library of one folder of
# platform/ (platform/NAME/): its src/*.cpp, its public headers in NAME/include (nvsvp/platform/...),
# its private ones beside its sources. A folder's headers reach only the folders that link it, so
# the build itself refuses an include against docs/ARCHITECTURE.md's directions.
function(nvsvp_platform_library name)
  cmake_parse_arguments(ARG "" "" "PUBLIC;PRIVATE" ${ARGN})
  file(GLOB sources CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/src/*.cpp)
  add_library(nvsvp_platform_${name} STATIC ${sources})
  target_include_directories(nvsvp_platform_${name} PUBLIC ${CMAKE_CURRENT_SOURCE_DIR}/include)
  target_link_libraries(nvsvp_platform_${name} PUBLIC ${ARG_PUBLIC} PRIVATE nvsvp_warnings ${ARG_PRIVATE})
endfunction()
