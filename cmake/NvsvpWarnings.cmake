# One warning set for every nvsvp target.
add_library(nvsvp_warnings INTERFACE)
target_compile_options(nvsvp_warnings INTERFACE -Wall -Wextra -Wpedantic -Wshadow
                       -Wnon-virtual-dtor -Wno-unused-parameter)
