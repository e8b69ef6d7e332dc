# Optional libraries of the library (docs/build_options.md).
#
#   ONYX_WITH_PCRE2          RegexFullMatch (libpcre2-dev)
#   ONYX_WITH_IMAGE_CODECS   default of the five codec options below
#   ONYX_WITH_PNG            ImageDecoder PNG streams (libpng-dev)
#   ONYX_WITH_JPEG           ImageDecoder JPEG streams (libjpeg62-turbo-dev)
#   ONYX_WITH_TIFF           ImageDecoder TIFF streams (libtiff-dev)
#   ONYX_WITH_WEBP           ImageDecoder WebP streams (libwebp-dev)
#   ONYX_WITH_OPENJPEG       ImageDecoder JPEG 2000 streams (libopenjp2-7-dev)
#
# Each is AUTO (the default), ON or OFF. AUTO means ON when the library is
# found on a native build, OFF when it is not, and OFF when cross-compiling
# (ARM64, WebAssembly) or in a minimal build (ONYX_OPS_CONFIG /
# ONYX_OPS_FROM_MODELS), where host libraries must not leak in. ON fails the
# configure step when the library is missing. With an option off, the build
# says so at run time: RegexFullMatch is refused at session creation and
# ImageDecoder refuses streams of that format, both naming the option.
#
# Sets ONYX_CODEC_INCLUDE_DIRS, ONYX_CODEC_LIBRARIES (full paths, so the
# exported onyx_static needs no find_dependency), ONYX_PC_CODEC_LIBS (for
# onyx.pc), and ONYX_HAVE_DEFINES (ONYX_HAVE_<NAME>=1 for each library used)
# for the sources that use them, ONYX_OPTIONAL_DEP_SOURCES (set on those files
# only, so switching an option rebuilds three files, not the library).

set(ONYX_WITH_PCRE2 AUTO CACHE STRING "RegexFullMatch through PCRE2: AUTO, ON or OFF")
set(ONYX_WITH_IMAGE_CODECS AUTO CACHE STRING "Default of ONYX_WITH_PNG/JPEG/TIFF/WEBP/OPENJPEG: AUTO, ON or OFF")
foreach(codec PNG JPEG TIFF WEBP OPENJPEG)
  set(ONYX_WITH_${codec} ${ONYX_WITH_IMAGE_CODECS} CACHE STRING
      "ImageDecoder ${codec} streams: AUTO, ON or OFF (default: ONYX_WITH_IMAGE_CODECS)")
endforeach()

set(ONYX_CODEC_INCLUDE_DIRS "")
set(ONYX_CODEC_LIBRARIES "")
set(ONYX_PC_CODEC_LIBS "")
set(ONYX_HAVE_DEFINES "")
set(ONYX_OPTIONAL_DEP_SOURCES
    ${CMAKE_SOURCE_DIR}/src/providers/cpu/kernels/io/image_decoder.c
    ${CMAKE_SOURCE_DIR}/src/providers/cpu/kernels/text/strings.c
    ${CMAKE_SOURCE_DIR}/src/providers/cpu/build_options.c)

# AUTO turns into OFF on these builds without looking for the library.
if(CMAKE_CROSSCOMPILING OR EMSCRIPTEN OR ONYX_OPS_CONFIG OR ONYX_OPS_FROM_MODELS)
  set(ONYX_AUTO_OFF ON)
else()
  set(ONYX_AUTO_OFF OFF)
endif()

# onyx_optional_library(NAME DEBIAN_PKG HEADER LIBRARY PC_FLAGS [SUFFIXES...]):
# resolve ONYX_WITH_<NAME> into ONYX_HAVE_<NAME>, looking for HEADER and
# LIBRARY only when they may be used (a cross build must not find the
# host's), and add what the build needs to the lists above.
macro(onyx_optional_library name debian_pkg header library pc_flags)
  string(TOUPPER "${ONYX_WITH_${name}}" _want)
  if(_want STREQUAL "AUTO" AND ONYX_AUTO_OFF)
    set(_want OFF)
  endif()
  set(_found OFF)
  if(_want)
    find_path(${name}_INCLUDE_DIR ${header} PATH_SUFFIXES ${ARGN})
    find_library(${name}_LIBRARY ${library})
    if(${name}_INCLUDE_DIR AND ${name}_LIBRARY)
      set(_found ON)
    endif()
  endif()
  if(_want STREQUAL "AUTO" AND NOT _found)
    message(STATUS "onyx: ${debian_pkg} not found, building without it (ONYX_WITH_${name}=OFF)")
    set(_want OFF)
  elseif(_want AND NOT _found)
    message(FATAL_ERROR "ONYX_WITH_${name}=${ONYX_WITH_${name}} but ${debian_pkg} was not found: "
                        "install it or configure with -DONYX_WITH_${name}=OFF")
  endif()
  if(_want)
    set(ONYX_HAVE_${name} ON)
    list(APPEND ONYX_CODEC_INCLUDE_DIRS ${${name}_INCLUDE_DIR})
    list(APPEND ONYX_CODEC_LIBRARIES ${${name}_LIBRARY})
    list(APPEND ONYX_HAVE_DEFINES ONYX_HAVE_${name}=1)
    string(APPEND ONYX_PC_CODEC_LIBS " ${pc_flags}")
  else()
    set(ONYX_HAVE_${name} OFF)
  endif()
endmacro()

onyx_optional_library(PCRE2 libpcre2-dev pcre2.h pcre2-8 -lpcre2-8)
onyx_optional_library(PNG libpng-dev png.h png16 -lpng16)
onyx_optional_library(JPEG libjpeg62-turbo-dev jpeglib.h jpeg -ljpeg)
onyx_optional_library(TIFF libtiff-dev tiffio.h tiff -ltiff)
onyx_optional_library(WEBP libwebp-dev webp/decode.h webp -lwebp)
onyx_optional_library(OPENJPEG libopenjp2-7-dev openjpeg.h openjp2 -lopenjp2
                      openjpeg-2.5 openjpeg-2.4 openjpeg-2.3)
message(STATUS "onyx: PCRE2 ${ONYX_HAVE_PCRE2}, PNG ${ONYX_HAVE_PNG}, JPEG ${ONYX_HAVE_JPEG}, "
               "TIFF ${ONYX_HAVE_TIFF}, WebP ${ONYX_HAVE_WEBP}, OpenJPEG ${ONYX_HAVE_OPENJPEG}")
