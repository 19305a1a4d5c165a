# Shortcuts for the usual invocations. The build itself is CMake (CMakeLists.txt);
# everything here can also be done with cmake and ctest directly.
#
#   make                build build/ (gcc, RelWithDebInfo); tools land in build/bin
#   make test           install missing packages, build, run every test suite,
#                       then the sanitized suite (below)
#   make test-sanitize  build build-sanitize/ (clang, ASan+UBSan, fuzzers) and test it
#   make demo           build, check the example kernels, evaluate and draw layouts
#   make format         reformat all C sources with clang-format
#   make deps           install missing Debian packages (.ci/install-deps)
#   make clean          remove both build trees

BUILD        ?= build
BUILD_SAN    ?= build-sanitize
BUILD_TYPE   ?= RelWithDebInfo
CMAKE        ?= cmake
CTEST        ?= ctest
CLANG_FORMAT ?= clang-format

MAKEFLAGS += --no-print-directory

# Hand `make -jN` on to Ninja (a plain `make -j` leaves Ninja's own default).
# Deferred (=), because make only shows -j in MAKEFLAGS once recipes run.
JOBS  = $(patsubst -j%,%,$(filter -j%,$(MAKEFLAGS)))
NINJA = $(if $(JOBS),-j $(JOBS))

CONFIGURE = $(CMAKE) -G Ninja -DCMAKE_BUILD_TYPE=$(BUILD_TYPE) -DFLY_WERROR=ON

.PHONY: all deps test test-sanitize demo format clean

all: $(BUILD)/build.ninja
	$(CMAKE) --build $(BUILD) $(NINJA)

# Configure once; afterwards Ninja re-runs CMake itself when a CMakeLists.txt
# or a globbed source list changes.
$(BUILD)/build.ninja:
	CC=cc $(CONFIGURE) -S . -B $(BUILD)

$(BUILD_SAN)/build.ninja:
	CC=clang CXX=clang++ $(CONFIGURE) -DFLY_SANITIZE=ON -DFLY_FUZZ=ON -DFLY_BUILD_KERNELS=OFF -S . -B $(BUILD_SAN)

deps:
	.ci/install-deps

# Steps run in order as sub-makes, so `make -j test` cannot start building
# before the packages are there.
test: deps
	@echo "==== build ($(BUILD)/, gcc) ===="
	$(MAKE) all
	@echo "==== test ($(BUILD)/) ===="
	$(CTEST) --test-dir $(BUILD) --output-on-failure -j2
	@echo "==== sanitized build and test ($(BUILD_SAN)/, clang, ASan+UBSan+libFuzzer) ===="
	$(MAKE) test-sanitize

test-sanitize: $(BUILD_SAN)/build.ninja
	$(CMAKE) --build $(BUILD_SAN) $(NINJA)
	$(CTEST) --test-dir $(BUILD_SAN) --output-on-failure -j2

# The examples are checked and compiled into one bundle for an NVIDIA and an
# AMD target, and the bundles shown; the vector add runs on the GPU where there
# is one (flyc run), and is checked without launching where there is not.
demo: deps
	$(MAKE) all
	@for f in examples/*.fly; do for t in sm_90 gfx942; do \
	  echo "\$$ flyc check $$f --target $$t --print-specializations"; \
	  $(BUILD)/bin/flyc check $$f --target $$t --print-specializations || exit 1; \
	done; done
	@mkdir -p $(BUILD)/demo
	@for f in examples/*.fly; do b=$(BUILD)/demo/$$(basename $$f .fly).flyb; \
	  echo "\$$ flyc compile $$f --emit=bundle --target=sm_90,gfx942 -o $$b"; \
	  $(BUILD)/bin/flyc compile $$f --emit=bundle --target=sm_90,gfx942 -o $$b || exit 1; \
	done
	@echo "\$$ flyc inspect $(BUILD)/demo/01-vector-add.flyb"
	@$(BUILD)/bin/flyc inspect $(BUILD)/demo/01-vector-add.flyb
	@n=1048576; run="$(BUILD)/bin/flyc run $(BUILD)/demo/01-vector-add.flyb A=randn:f32:$$n B=randn:f32:$$n C=zeros:f32:$$n"; \
	if python3 -c 'import ctypes; ctypes.CDLL("libcuda.so.1")' 2>/dev/null; then \
	  echo "\$$ flyc run $(BUILD)/demo/01-vector-add.flyb A=randn:f32:$$n B=randn:f32:$$n C=zeros:f32:$$n --bench 100"; \
	  $$run --bench 100 || exit 1; \
	else \
	  echo "\$$ flyc run $(BUILD)/demo/01-vector-add.flyb ... --dry-run   (no GPU here: checked, not launched)"; \
	  $$run --dry-run || exit 1; \
	fi
	@echo "\$$ flyc eval 'ceil_div(1 << 20, 256 * 4)'"
	@$(BUILD)/bin/flyc eval 'ceil_div(1 << 20, 256 * 4)'
	@echo "\$$ flyc layout 'zipped_divide((8,16):(1,8), (4:1, 8:1))'"
	@$(BUILD)/bin/flyc layout 'zipped_divide((8,16):(1,8), (4:1, 8:1))'
	@echo "\$$ flyc layout 'tiled_copy(copy_atom(universal(128), f32), (4,2):(2,1), (1,4):(0,1))' --table"
	@$(BUILD)/bin/flyc layout 'tiled_copy(copy_atom(universal(128), f32), (4,2):(2,1), (1,4):(0,1))' --table
	@echo "\$$ flyc layout 'composition(swizzle(2,0,2), (4,4):(4,1))' --table --svg $(BUILD)/swizzle.svg"
	@$(BUILD)/bin/flyc layout 'composition(swizzle(2,0,2), (4,4):(4,1))' --table --svg $(BUILD)/swizzle.svg
	@echo "(the picture is in $(BUILD)/swizzle.svg)"
	@echo
	$(BUILD)/bin/fly-layout --demo

format:
	tests/format/check-format.sh $(CLANG_FORMAT) . --fix

clean:
	rm -rf $(BUILD) $(BUILD_SAN)
