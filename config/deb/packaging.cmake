# Debian packages (CPack DEB), one per part of sar, as a site installs them with apt
# (docs/operations.md "Debian packages"). `cpack -G DEB` in a build configured with
# -DCMAKE_INSTALL_PREFIX=/usr; tests/install/check_packages.py builds and checks them.
#
#   sar-tools          sar-route, the administrator's documentation
#   sar-filterd        the daemon, its unit and /etc/sar/sar-filterd.yaml; a system user
#   opensm-sar-plugin  libosmsar.so, /etc/sar/osmsar.conf, the opensm.conf sample
#   slurm-sar          sar_pattern.so (SPANK), sar-notify, job_submit.lua, their samples
#   sar-agent          the node agent, libsarmig, sar-migconsumer
#
# The maintainer scripts beside this file never enable or start a unit and never touch OpenSM:
# the administrator does that after the checks of docs/operations.md.

# A site building its own packages names itself here (lintian: bogus-mail-host otherwise).
set(SAR_DEB_MAINTAINER "sar maintainers <sar@localhost>" CACHE STRING
    "Maintainer of the Debian packages (cpack -G DEB)")
set(_deb ${CMAKE_CURRENT_LIST_DIR})
set(_gen ${PROJECT_BINARY_DIR}/deb)

# Component -> Debian package name, built only where its targets are.
set(_components tools filterd)
set(SAR_DEB_tools sar-tools)
set(SAR_DEB_filterd sar-filterd)
set(SAR_DEB_osmplugin opensm-sar-plugin)
set(SAR_DEB_slurm slurm-sar)
set(SAR_DEB_agent sar-agent)
if(TARGET osmsar)
  list(APPEND _components osmplugin)
endif()
if(TARGET sar_pattern)
  list(APPEND _components slurm)
endif()
if(TARGET sar-agent)
  list(APPEND _components agent)
endif()

# Every Debian package carries its copyright and changelog in /usr/share/doc/<package>.
string(TIMESTAMP _date "%a, %d %b %Y %H:%M:%S +0000" UTC)
foreach(c ${_components})
  set(pkg ${SAR_DEB_${c}})
  file(WRITE ${_gen}/${pkg}/changelog.Debian
       "${pkg} (${PROJECT_VERSION}-1) unstable; urgency=medium\n\n"
       "  * Built from the sar source tree with CPack.\n\n"
       " -- ${SAR_DEB_MAINTAINER}  ${_date}\n")
  execute_process(COMMAND gzip -9nf ${_gen}/${pkg}/changelog.Debian)
  # EXCLUDE_FROM_ALL: only in the packages, not in a plain `cmake --install`.
  install(FILES ${_deb}/copyright ${_gen}/${pkg}/changelog.Debian.gz
          DESTINATION ${CMAKE_INSTALL_DATADIR}/doc/${pkg} COMPONENT ${c} EXCLUDE_FROM_ALL)
endforeach()
# The mapping's directory exists before OpenSM first starts, so the plugin can write its ready
# file there at once (sar-filterd's unit makes it its own at start: StateDirectory=sar).
if(TARGET osmsar)
  install(DIRECTORY DESTINATION ${CMAKE_INSTALL_FULL_LOCALSTATEDIR}/lib/sar COMPONENT osmplugin
          EXCLUDE_FROM_ALL)
endif()

# cpack installs what is built; it does not build the whole tree first (its `preinstall` step
# would otherwise depend on `all`, tests and benchmarks included). `cmake --install` never builds.
set(CMAKE_SKIP_INSTALL_ALL_DEPENDENCY ON)

set(CPACK_GENERATOR DEB)
set(CPACK_DEB_COMPONENT_INSTALL ON)
set(CPACK_COMPONENTS_ALL ${_components})
set(CPACK_PACKAGE_NAME sar)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
# Debian revision 1: the packaging is not upstream's own (changelog.Debian.gz, not changelog.gz).
set(CPACK_DEBIAN_PACKAGE_RELEASE 1)
set(CPACK_PACKAGE_CONTACT "${SAR_DEB_MAINTAINER}")
set(CPACK_PACKAGING_INSTALL_PREFIX ${CMAKE_INSTALL_PREFIX})
# /etc/sar and /var/lib/sar are absolute destinations: staged under DESTDIR, never the host's.
set(CPACK_SET_DESTDIR ON)
set(CPACK_STRIP_FILES ON)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION net)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
set(CPACK_DEBIAN_PACKAGE_HOMEPAGE "https://localhost/sar")
# Library dependencies from the binaries themselves (dpkg-shlibdeps).
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
# libsarmig.so.1 (sar-agent, with a shlibs file) and libosmsar.so come with an ldconfig trigger
# (config/deb/triggers), not CPack's ldconfig calls from postinst/postrm.
set(CPACK_DEBIAN_PACKAGE_GENERATE_SHLIBS OFF)

# conffiles: dpkg keeps an administrator's edits on upgrade and asks on conflict.
function(_sar_deb_conffiles component)
  set(text "")
  foreach(f ${ARGN})
    if(f MATCHES "/")  # a path under /etc (logrotate.d/sar-filterd), else a file of /etc/sar
      string(APPEND text "${CMAKE_INSTALL_FULL_SYSCONFDIR}/${f}\n")
    else()
      string(APPEND text "${CMAKE_INSTALL_FULL_SYSCONFDIR}/sar/${f}\n")
    endif()
  endforeach()
  file(WRITE ${_gen}/${component}/conffiles "${text}")
endfunction()

# The programs' built-in paths are made from the configured prefix: a package for any other
# prefix would point at files it does not ship.
if(NOT CMAKE_INSTALL_PREFIX STREQUAL "/usr")
  message(STATUS "Debian packages: configured for ${CMAKE_INSTALL_PREFIX}, not /usr; "
                 "cpack would make packages outside Debian's layout (reconfigure with "
                 "-DCMAKE_INSTALL_PREFIX=/usr)")
endif()

set(_ver "${PROJECT_VERSION}-1")
# tools
set(CPACK_COMPONENT_TOOLS_DESCRIPTION
    "sar: scheduling-aware routing for InfiniBand fat-trees - tools\nsar-route generates fabrics, routes them with sar and other engines, evaluates\nand diffs linear forwarding tables read back from switches. Also the\nadministrator's documentation (/usr/share/doc/sar).")
# filterd
set(CPACK_COMPONENT_FILTERD_DESCRIPTION
    "sar: scheduling-aware routing - the SLURM job filter daemon\nsar-filterd reads SLURM's running jobs, keeps those spanning several leaf\nswitches and tells OpenSM (sar plugin or file engine) to reroute.\nIt runs as the system user sar-filterd; the unit is installed but not enabled.")
set(CPACK_DEBIAN_FILTERD_PACKAGE_DEPENDS "adduser, sar-tools (= ${_ver})")
set(CPACK_DEBIAN_FILTERD_PACKAGE_RECOMMENDS "opensm-sar-plugin (= ${_ver})")
set(CPACK_DEBIAN_FILTERD_PACKAGE_SUGGESTS "slurm-sar (= ${_ver}), netcat-openbsd")
_sar_deb_conffiles(filterd sar-filterd.yaml logrotate.d/sar-filterd)
foreach(s postinst prerm postrm)
  configure_file(${_deb}/sar-filterd.${s} ${_gen}/filterd/${s} COPYONLY)
endforeach()
set(CPACK_DEBIAN_FILTERD_PACKAGE_CONTROL_EXTRA
    ${_gen}/filterd/conffiles ${_gen}/filterd/postinst ${_gen}/filterd/prerm
    ${_gen}/filterd/postrm)
set(CPACK_DEBIAN_FILTERD_PACKAGE_CONTROL_STRICT_PERMISSION ON)
# osmplugin: OpenSM dlopens it and resolves OpenSM's own symbols from the process, so it is
# tied to the OpenSM it was built against (its headers: libopensm-dev).
execute_process(COMMAND dpkg-query -W -f=\${source:Upstream-Version} opensm
                OUTPUT_VARIABLE _osm_ver ERROR_QUIET)
if(_osm_ver)
  set(CPACK_DEBIAN_OSMPLUGIN_PACKAGE_DEPENDS "opensm (>= ${_osm_ver}~), opensm (<< ${_osm_ver}.~)")
else()
  set(CPACK_DEBIAN_OSMPLUGIN_PACKAGE_DEPENDS "opensm")
endif()
set(CPACK_DEBIAN_OSMPLUGIN_PACKAGE_CONTROL_STRICT_PERMISSION ON)
set(CPACK_DEBIAN_OSMPLUGIN_PACKAGE_RECOMMENDS "sar-filterd (= ${_ver}), infiniband-diags")
set(CPACK_COMPONENT_OSMPLUGIN_DESCRIPTION
    "sar: scheduling-aware routing - OpenSM routing engine plugin\nlibosmsar.so adds the routing engine 'sar' to OpenSM; it reroutes on SIGUSR2\nwith sar-filterd's job mapping. Installing it changes nothing in a running\nOpenSM: opensm.conf must name it and OpenSM be restarted by the administrator.")
_sar_deb_conffiles(osmplugin osmsar.conf opensm.conf)
foreach(s postinst postrm)
  configure_file(${_deb}/opensm-sar-plugin.${s} ${_gen}/osmplugin/${s} COPYONLY)
endforeach()
set(CPACK_DEBIAN_OSMPLUGIN_PACKAGE_CONTROL_EXTRA ${_gen}/osmplugin/conffiles ${_deb}/triggers
    ${_gen}/osmplugin/postinst ${_gen}/osmplugin/postrm)
# slurm: the SPANK plugin is loaded by SLURM's own programs, of the version it was built for.
execute_process(COMMAND dpkg-query -W -f=\${source:Upstream-Version} libslurm-dev
                OUTPUT_VARIABLE _slurm_ver ERROR_QUIET)
if(_slurm_ver)
  set(CPACK_DEBIAN_SLURM_PACKAGE_DEPENDS "slurm-client (>= ${_slurm_ver}~), slurm-client (<< ${_slurm_ver}.~)")
else()
  set(CPACK_DEBIAN_SLURM_PACKAGE_DEPENDS "slurm-client")
endif()
set(CPACK_DEBIAN_SLURM_PACKAGE_RECOMMENDS "sar-filterd (= ${_ver})")
set(CPACK_COMPONENT_SLURM_DESCRIPTION
    "sar: scheduling-aware routing - SLURM side\nThe SPANK plugin sar_pattern.so (--sar-pattern), the controller hook\nsar-notify (PrologSlurmctld/EpilogSlurmctld) and job_submit.lua. Nothing is\nadded to slurm.conf or plugstack.conf by the package.")
_sar_deb_conffiles(slurm plugstack.conf sar-notify.conf)
set(CPACK_DEBIAN_SLURM_PACKAGE_CONTROL_EXTRA ${_gen}/slurm/conffiles)
# agent
set(CPACK_COMPONENT_AGENT_DESCRIPTION
    "sar: scheduling-aware routing - node agent of the migration protocol\nsar-agent takes the SA's migration Reports on a node and tells local consumers\n(libsarmig, sar-migconsumer) when to move traffic between base and high LID.")
foreach(s postinst prerm postrm)
  configure_file(${_deb}/sar-agent.${s} ${_gen}/agent/${s} COPYONLY)
endforeach()
file(WRITE ${_gen}/agent/shlibs "libsarmig 1 sar-agent (>= ${_ver})\n")
set(CPACK_DEBIAN_AGENT_PACKAGE_CONTROL_EXTRA ${_gen}/agent/postinst ${_gen}/agent/prerm
    ${_gen}/agent/postrm ${_deb}/triggers ${_gen}/agent/shlibs)
set(CPACK_DEBIAN_AGENT_PACKAGE_CONTROL_STRICT_PERMISSION ON)

foreach(c ${_components})
  string(TOUPPER ${c} C)
  set(CPACK_DEBIAN_${C}_PACKAGE_NAME ${SAR_DEB_${c}})
  set(CPACK_COMPONENT_${C}_DISPLAY_NAME ${SAR_DEB_${c}})
endforeach()
include(CPack)
