# Hardening regressions (issue 10), named data.harden.* so that CI also runs them under
# ASan/UBSan (scripts/test.sh runs the unit.* and data.* tests there). The models come from
# tests/data/make_harden_models.py.
add_test(NAME data.harden.run_timeout
         COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/harden/cli_timeout.sh $<TARGET_FILE:onyx>
         WORKING_DIRECTORY ${CMAKE_SOURCE_DIR})
set_tests_properties(data.harden.run_timeout PROPERTIES TIMEOUT 60)
