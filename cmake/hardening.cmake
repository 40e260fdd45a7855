# Debian's hardening flags on every program and library, the OpenSM plugin included (it runs
# inside root's OpenSM): stack protector (strong), stack clash protection, _FORTIFY_SOURCE=2,
# format-string errors, full RELRO (-z relro -z now: BIND_NOW) and PIE executables. Taken from
# `dpkg-buildflags` (hardening=+all) where it exists, so packages built here get what Debian's
# own would; otherwise the same list, fixed. tests/install/check_hardening.py reads them back from
# every installed ELF. Off with the sanitizers (ASan and FORTIFY do not mix) and for fuzzing.
option(SAR_HARDENING "Build with Debian's hardening flags (dpkg-buildflags hardening=+all)" ON)
if(NOT SAR_HARDENING OR SAR_SANITIZE OR SAR_FUZZ)
  return()
endif()

set(_compile -fstack-protector-strong -fstack-clash-protection -Wformat -Werror=format-security)
set(_link -Wl,-z,relro -Wl,-z,now)
find_program(SAR_DPKG_BUILDFLAGS dpkg-buildflags)
if(SAR_DPKG_BUILDFLAGS)
  set(_compile "")
  set(_link "")
  foreach(kind CPPFLAGS CXXFLAGS LDFLAGS)
    execute_process(COMMAND ${CMAKE_COMMAND} -E env DEB_BUILD_MAINT_OPTIONS=hardening=+all
                            ${SAR_DPKG_BUILDFLAGS} --get ${kind}
                    OUTPUT_VARIABLE _flags OUTPUT_STRIP_TRAILING_WHITESPACE)
    separate_arguments(_flags UNIX_COMMAND "${_flags}")
    # Only the hardening ones: -O and -g stay the build type's, -ffile-prefix-map the build's,
    # and FORTIFY and PIE are set below (FORTIFY needs optimization; CMake knows PIE per target).
    foreach(f ${_flags})
      if(f MATCHES "^-(fstack-protector|fstack-clash-protection|fcf-protection|Wformat|Werror=format-security)")
        list(APPEND _compile ${f})
      elseif(f MATCHES "^-Wl,-z,")
        list(APPEND _link ${f})
      endif()
    endforeach()
  endforeach()
  list(REMOVE_DUPLICATES _compile)
  list(REMOVE_DUPLICATES _link)
endif()
add_compile_options(${_compile})
# glibc warns (an error with -Werror) when _FORTIFY_SOURCE is set without optimization.
add_compile_definitions($<$<NOT:$<CONFIG:Debug>>:_FORTIFY_SOURCE=2>)
add_link_options(${_link})
set(CMAKE_POSITION_INDEPENDENT_CODE ON)
include(CheckPIESupported)
check_pie_supported()
message(STATUS "sar hardening: ${_compile} _FORTIFY_SOURCE=2 (not Debug) ${_link} PIE")
