# ftrun build. `make` builds build/ftrun; `make test` runs every test;
# `make demo` runs an example graph; `make install` honours PREFIX and DESTDIR.
# Missing Debian packages are installed by `make deps`, which the other
# targets call when a header or tool is missing.

# Every core by default (the CUDA objects build one per core); -jN chooses.
ifeq ($(filter -j% --jobs%,$(MAKEFLAGS)),)
MAKEFLAGS += -j$(shell nproc 2>/dev/null || echo 1)
endif

.DEFAULT_GOAL := all
PREFIX ?= /usr/local
DESTDIR ?=
BUILD ?= build
CC ?= cc
PYTHON ?= /usr/bin/python3

WARN := -Wall -Wextra -Werror -Wswitch-enum -Wshadow -Wno-unused-parameter -Wstrict-prototypes
CFLAGS ?= -O2 -g
# Flags the build always needs; CFLAGS (optimisation, sanitizers) may be set on the command line.
FT_CFLAGS := -std=gnu11 $(WARN) -fopenmp -D_FILE_OFFSET_BITS=64 -MMD -MP -I/usr/include/openjpeg-2.5
# image_decoder's readers (src/graph/image_codec.c)
IMAGE_LIBS := -ljpeg -lpng16 -lwebp -ltiff -lopenjp2 -lstb
# OpenBLAS's OpenMP build (Debian's libopenblas-openmp-dev), linked by its own
# folder: its threads are libgomp's, the pool ftrun's loops and oneDNN use. The
# pthread build that the libopenblas.so alternative names by default keeps a
# pool of its own whose idle threads spin (sched_yield) for about 0.1 s after
# the library loads and after each threaded call, holding a core that an
# OpenMP thread then waits for (the first run of MobileNetV2 at 2 threads on 2
# cores: 22-25 ms, or 106-117 ms in one start out of three).
MULTIARCH := $(shell $(CC) -print-multiarch 2>/dev/null || echo x86_64-linux-gnu)
OPENBLAS_LIB := /usr/lib/$(MULTIARCH)/openblas-openmp
FT_CFLAGS += -I/usr/include/$(MULTIARCH)/openblas-openmp
LDLIBS := -lcjson -lprotobuf-c -ldnnl -L$(OPENBLAS_LIB) -Wl,-rpath,$(OPENBLAS_LIB) -lopenblas -lfftw3f_omp -lfftw3_omp -lfftw3f -lfftw3 -lz -lm -ldl -fopenmp $(IMAGE_LIBS)
# The CUDA backend (a shared object loaded at run time) calls back into the
# binary's graph functions, so the binary exports its symbols.
FT_LDFLAGS := -rdynamic

# The CUDA backend, built when nvcc is found (CUDA_HOME/bin or PATH). It links
# cuBLAS and cuFFT; the ftrun binary itself never links CUDA.
CUDA_HOME ?= /usr/local/cuda
NVCC ?= $(firstword $(wildcard $(CUDA_HOME)/bin/nvcc) $(shell command -v nvcc 2>/dev/null))
CUDA_ARCH ?= -gencode arch=compute_90,code=sm_90 -gencode arch=compute_90,code=compute_90
NVCC_WARN := -Xcompiler -Wall,-Wextra,-Werror,-Wswitch-enum,-Wshadow,-Wno-unused-parameter -Werror all-warnings
NVCC_FLAGS := -std=c++17 -O3 $(CUDA_ARCH) $(NVCC_WARN) -Xcompiler -fPIC,-fvisibility=hidden -MMD -MP
CUDA_SRCS := $(wildcard src/cuda/*.cu)
CUDA_OBJS := $(CUDA_SRCS:%.cu=$(BUILD)/%.o)
CUDA_LIB := $(BUILD)/libftrun-cuda.so

SRCS := $(wildcard src/*.c src/graph/*.c src/io/*.c src/onnx/*.c src/opt/*.c src/runtime/*.c src/pipeline/*.c src/cpu/*.c src/cli/*.c)
OBJS := $(SRCS:%.c=$(BUILD)/%.o) $(BUILD)/gen/onnx.pb-c.o

# The ONNX schema is Debian's (libonnx-dev); protoc-c turns it into C at build
# time, so no generated code lives in the repository. On a new machine the
# schema comes with the packages: the stamp's rule installs them first.
DEPS_STAMP := $(BUILD)/.deps-ok
ONNX_PROTO ?= /usr/include/onnx/onnx.proto
$(ONNX_PROTO): | $(DEPS_STAMP)
$(BUILD)/gen/onnx.pb-c.c $(BUILD)/gen/onnx.pb-c.h &: $(ONNX_PROTO) | $(DEPS_STAMP)
	@mkdir -p $(BUILD)/gen
	protoc-c --c_out=$(BUILD)/gen -I$(dir $(ONNX_PROTO)) $(ONNX_PROTO)
$(BUILD)/gen/onnx.pb-c.o: $(BUILD)/gen/onnx.pb-c.c
	$(CC) $(FT_CFLAGS) $(CFLAGS) -c $< -o $@
$(filter-out $(BUILD)/gen/%,$(OBJS)): | $(BUILD)/gen/onnx.pb-c.h
FT_CFLAGS += -I$(BUILD)/gen

.PHONY: all deps demo test test-asan asan install uninstall clean check-deps cuda

all: $(BUILD)/ftrun $(if $(NVCC),$(CUDA_LIB))

cuda: $(CUDA_LIB)

$(CUDA_LIB): $(CUDA_OBJS)
	@test -n "$(NVCC)" || { echo "cuda: nvcc not found (set CUDA_HOME or NVCC)" >&2; exit 1; }
	$(NVCC) -shared $(CUDA_ARCH) -o $@ $(CUDA_OBJS) -lcublas -lcufft -Xlinker -rpath,$(CUDA_HOME)/lib64

$(BUILD)/src/cuda/%.o: src/cuda/%.cu
	@mkdir -p $(dir $@)
	$(NVCC) $(NVCC_FLAGS) -c $< -o $@

-include $(CUDA_OBJS:.o=.d)

# Debian packages the build and the tests need.
DEB_PKGS := gcc libcjson-dev zlib1g-dev libdnnl-dev libopenblas-openmp-dev libfftw3-dev libprotobuf-c-dev protobuf-c-compiler libonnx-dev \
	libjpeg62-turbo-dev libpng-dev libwebp-dev libtiff-dev libopenjp2-7-dev libstb-dev python3-pil \
	bats python3-numpy python3-torch python3-torchvision python3-onnx libonnx-testdata xz-utils valgrind strace man-db \
	clang libclang-rt-14-dev
deps:
	@scripts/deps.sh $(DEB_PKGS)

$(DEPS_STAMP):
	@scripts/deps.sh --if-missing $(DEB_PKGS)
	@mkdir -p $(BUILD) && touch $@

# ONNX Runtime for `bench/run.py --onnx` (bench/README.md), into bench/ort/node_modules:
# the binaries shipped in the npm package (the install script's download is skipped).
.PHONY: bench-deps
bench-deps:
	@command -v npm >/dev/null || { echo "bench-deps: npm not found (Node.js 16 or later with npm)" >&2; exit 1; }
	cd bench/ort && ONNXRUNTIME_NODE_INSTALL=skip npm ci --no-audit --no-fund
	cd bench/ort && node -e "require('onnxruntime-node')" && echo "bench-deps: onnxruntime-node loads"

$(BUILD)/ftrun: $(OBJS)
	$(CC) $(FT_LDFLAGS) $(LDFLAGS) -o $@ $(OBJS) $(LDLIBS)

$(BUILD)/%.o: %.c | $(DEPS_STAMP)
	@mkdir -p $(dir $@)
	$(CC) $(FT_CFLAGS) $(CFLAGS) -c $< -o $@

-include $(OBJS:.o=.d)

demo: all
	$(BUILD)/ftrun graphs/transformer_block.json -o $(BUILD)/demo-out
	@echo "results in $(BUILD)/demo-out (timing.json and one .npy per output)"

test: all
	@FTRUN=$(abspath $(BUILD)/ftrun) PYTHON=$(PYTHON) tests/run.sh

# Real models exported from PyTorch (tests/onnx/torch_models.sh): the CI set runs
# in `make test`; this target adds the slow ones (resnet50, vit_b_16: 430 MB).
.PHONY: test-torch-models
test-torch-models: all
	@FTRUN=$(abspath $(BUILD)/ftrun) PYTHON=$(PYTHON) tests/onnx/torch_models.sh \
	    $$($(PYTHON) tests/onnx/export_torch.py --list | cut -d' ' -f1)

# The CUDA tier alone (needs a GPU): numeric tests on cuda:0 and the parity
# suite against the cpu reference; the -sanitize form runs the parity suite
# under compute-sanitizer's memcheck and racecheck.
.PHONY: test-cuda test-cuda-sanitize
test-cuda: all
	@$(BUILD)/ftrun devices | grep -q '^cuda:' || { $(BUILD)/ftrun devices; echo "test-cuda: no usable CUDA device" >&2; exit 1; }
	@FTRUN=$(abspath $(BUILD)/ftrun) PYTHON=$(PYTHON) tests/cuda/run.sh > $(BUILD)/test-cuda.log 2>&1; rc=$$?; \
	    cat $(BUILD)/test-cuda.log; \
	    echo "$$(grep -c '^ok ' $(BUILD)/test-cuda.log) passed, $$(grep -c '^not ok ' $(BUILD)/test-cuda.log) failed"; exit $$rc
test-cuda-sanitize: all
	@for tool in memcheck racecheck; do \
	    echo "# compute-sanitizer --tool $$tool"; \
	    extra=; [ $$tool = memcheck ] && extra="--leak-check full"; \
	    FTRUN=$(abspath $(BUILD)/ftrun) FTPARITY_WRAP="$(CUDA_HOME)/bin/compute-sanitizer --tool $$tool --error-exitcode 97 $$extra" \
	        FTPARITY_JOBS=4 $(PYTHON) tests/cuda/parity.py || exit 1; \
	done

# A self-contained archive for a GPU machine without ftrun's Debian libraries
# or bats (scripts/device-bundle.sh): ftrun, the CUDA backend, the cuBLAS peer
# of bench/cuda.py, the libraries from their Debian packages, ONNX's test data
# and scripts/device-run.sh as run.sh. Checked here with the system's copies
# of those libraries hidden before it is written.
DEVICE_BUNDLE := $(BUILD)/ftrun-device.tar.xz
.PHONY: device-bundle
device-bundle: $(BUILD)/ftrun $(CUDA_LIB) $(BUILD)/cuda_peer
	@scripts/device-bundle.sh $(BUILD) $(DEVICE_BUNDLE)
$(BUILD)/cuda_peer: bench/cuda_peer.cu
	@test -n "$(NVCC)" || { echo "cuda_peer: nvcc not found (set CUDA_HOME or NVCC)" >&2; exit 1; }
	$(NVCC) -O3 -std=c++17 -arch=sm_90 -o $@ $< -lcublas -Xlinker -rpath,$(CUDA_HOME)/lib64

# tests/onnx/unsupported.txt and unsupported_6be0677.txt, rewritten from the
# ONNX importer's own "unsupported" refusals in Debian's libonnx-testdata and
# in ONNX's test data at 6be0677 (tests/data/onnx-testdata-6be0677) (never from a mismatch
# or a crash: those fail the run, listed or not).
.PHONY: onnx-unsupported-list
onnx-unsupported-list: $(BUILD)/ftrun
	@FTRUN=$(abspath $(BUILD)/ftrun) FTRUN_CUDA_DRIVER=/nonexistent/libcuda.so.1 $(PYTHON) tests/onnx/testdata.py --write-list \
	    > $(BUILD)/onnx-list.log; rc=$$?; grep -v '^ok ' $(BUILD)/onnx-list.log; \
	FTRUN=$(abspath $(BUILD)/ftrun) FTRUN_CUDA_DRIVER=/nonexistent/libcuda.so.1 PYTHON=$(PYTHON) tests/onnx/testdata_6be0677.sh \
	    --write-list > $(BUILD)/onnx-list-6be0677.log || rc=1; grep -v '^ok ' $(BUILD)/onnx-list-6be0677.log; exit $$rc

# Address and undefined-behaviour sanitizers over the whole suite.
asan:
	$(MAKE) BUILD=build/asan CC=gcc CFLAGS="-O1 -g -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined" LDFLAGS="-fsanitize=address,undefined" build/asan/ftrun
test-asan: asan
	@FTRUN=$(abspath build/asan/ftrun) FTRUN_SANITIZED=1 FTRUN_SKIP_CUDA=1 PYTHON=$(PYTHON) ASAN_OPTIONS=detect_leaks=1 tests/run.sh

install: all
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/share/man/man1 $(DESTDIR)$(PREFIX)/share/man/man5
	install -m 755 $(BUILD)/ftrun $(DESTDIR)$(PREFIX)/bin/ftrun
	if [ -f $(CUDA_LIB) ]; then install -d $(DESTDIR)$(PREFIX)/lib/ftrun && \
	    install -m 755 $(CUDA_LIB) $(DESTDIR)$(PREFIX)/lib/ftrun/libftrun-cuda.so; fi
	install -m 644 man/ftrun.1 $(DESTDIR)$(PREFIX)/share/man/man1/ftrun.1
	install -m 644 man/ftrun-graph.5 $(DESTDIR)$(PREFIX)/share/man/man5/ftrun-graph.5

uninstall:
	rm -f $(DESTDIR)$(PREFIX)/bin/ftrun $(DESTDIR)$(PREFIX)/lib/ftrun/libftrun-cuda.so \
	      $(DESTDIR)$(PREFIX)/share/man/man1/ftrun.1 \
	      $(DESTDIR)$(PREFIX)/share/man/man5/ftrun-graph.5
	rmdir $(DESTDIR)$(PREFIX)/lib/ftrun 2>/dev/null || true

clean:
	rm -rf build ftrun-out

# Fault injection (tests/fault/README.md): an LD_PRELOAD shim that makes the Nth
# allocation or I/O call fail; `make fault-sweep` runs the full sweep over every
# call of every command on the ASan build, which checks for leaks at every point
# (tests/cli/fault.bats runs a bounded sweep in `make test`).
.PHONY: fault fault-sweep
fault: $(BUILD)/fault/libfaultinject.so

$(BUILD)/fault/libfaultinject.so: tests/fault/faultinject.c
	@mkdir -p $(dir $@)
	$(CC) -std=gnu11 $(WARN) -O2 -g -fPIC -shared -Wl,-soname,libfaultinject.so -o $@ $< -ldl

fault-sweep: asan $(BUILD)/fault/libfaultinject.so
	FTRUN=$(abspath build/asan/ftrun) FTRUN_SANITIZED=1 FAULT_SHIM=$(abspath $(BUILD)/fault/libfaultinject.so) \
	    PYTHON=$(PYTHON) tests/fault/sweep.sh $(FAULT_CASES)

# ---- fuzzing: libFuzzer harnesses of fuzz/ (fuzz/README.md) ----
# `make fuzz FUZZ_SECONDS=60` builds every harness with clang (ASan + UBSan) and
# fuzzes each in turn; `make fuzz-regress` replays fuzz/regress and fuzz/corpus.
FUZZ_CC ?= clang
FUZZ_SECONDS ?= 60
FUZZ_BUILD := $(BUILD)/fuzz
# The sanitizers; the coverage build (fuzz-coverage) replaces them with clang's
# source-based coverage.
FUZZ_SAN := -fsanitize=address,undefined -fno-sanitize-recover=undefined
FUZZ_FLAGS := -std=gnu11 -O1 -g -fopenmp -D_FILE_OFFSET_BITS=64 -MMD -MP -fno-omit-frame-pointer \
	$(FUZZ_SAN) -I$(BUILD)/gen -I/usr/include/openjpeg-2.5
# The harnesses need the graph code (with the generated ONNX schema), the
# pipeline and its planner and executor, and the CPU kernels (the load
# evaluates what it folds on the CPU backend: src/pipeline/load_eval.c) with
# the libraries those link; fuzz_run also the CLI's input binding.
FUZZ_PIPE_SRCS := $(wildcard src/pipeline/*.c) src/runtime/plan.c src/runtime/exec.c src/runtime/threads.c
FUZZ_SRCS := $(wildcard src/*.c src/graph/*.c src/io/*.c src/onnx/*.c src/opt/*.c) $(FUZZ_PIPE_SRCS) $(BUILD)/gen/onnx.pb-c.c
FUZZ_OBJS := $(FUZZ_SRCS:%.c=$(FUZZ_BUILD)/obj/%.o)
FUZZ_RUN_SRCS := $(filter-out $(FUZZ_PIPE_SRCS),$(wildcard src/runtime/*.c)) $(wildcard src/cpu/*.c) src/cli/inputs.c
FUZZ_RUN_OBJS := $(FUZZ_RUN_SRCS:%.c=$(FUZZ_BUILD)/obj/%.o)
$(filter-out $(FUZZ_BUILD)/obj/$(BUILD)/gen/%,$(FUZZ_OBJS) $(FUZZ_RUN_OBJS)): | $(BUILD)/gen/onnx.pb-c.h
FUZZ_BINS := $(patsubst fuzz/fuzz_%.c,$(FUZZ_BUILD)/fuzz_%,$(wildcard fuzz/fuzz_*.c))
FUZZ_LINK := $(FUZZ_CC) $(FUZZ_FLAGS) -Wall -Wextra -Wno-unused-parameter -Werror -fsanitize=fuzzer -Isrc

.PHONY: fuzz fuzz-build fuzz-regress fuzz-coverage
.SECONDARY: $(FUZZ_OBJS) $(FUZZ_RUN_OBJS)
# clang reports every `omp simd` loop it leaves scalar at -O1
$(FUZZ_RUN_OBJS): FUZZ_FLAGS += -Wno-pass-failed

fuzz-build: $(FUZZ_BINS)

$(FUZZ_BUILD)/obj/%.o: %.c | $(DEPS_STAMP)
	@command -v $(FUZZ_CC) >/dev/null || { echo "fuzz: $(FUZZ_CC) not found (apt-get install clang libclang-rt-14-dev)" >&2; exit 1; }
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_FLAGS) -fsanitize=fuzzer-no-link -c $< -o $@

$(FUZZ_BUILD)/fuzz_%: fuzz/fuzz_%.c $(wildcard fuzz/*.h) $(FUZZ_OBJS) $(FUZZ_RUN_OBJS)
	$(FUZZ_LINK) -o $@ $< $(FUZZ_OBJS) $(FUZZ_RUN_OBJS) $(filter-out -fopenmp,$(LDLIBS))

$(FUZZ_BUILD)/fuzz_run: fuzz/fuzz_run.c $(wildcard fuzz/*.h) $(FUZZ_OBJS) $(FUZZ_RUN_OBJS)
	$(FUZZ_LINK) -o $@ $< $(FUZZ_OBJS) $(FUZZ_RUN_OBJS) $(filter-out -fopenmp,$(LDLIBS))

fuzz: fuzz-build
	FUZZ_BUILD=$(FUZZ_BUILD) FUZZ_SECONDS=$(FUZZ_SECONDS) fuzz/run.sh

fuzz-regress: fuzz-build
	FUZZ_BUILD=$(FUZZ_BUILD) fuzz/run.sh --regress

# Line coverage of the kernels reached by fuzz_run's corpus: the harness built
# with -fprofile-instr-generate -fcoverage-mapping (no sanitizers) in
# build/fuzz-cov, run once over FUZZ_COV_CORPUS (default: the campaign's
# corpus in build/fuzz/work/run/corpus when there is one, else fuzz/corpus/run
# and fuzz/regress/run), then llvm-cov's report of src/cpu.
fuzz-coverage:
	$(MAKE) FUZZ_BUILD=$(BUILD)/fuzz-cov FUZZ_SAN="-fprofile-instr-generate -fcoverage-mapping" $(BUILD)/fuzz-cov/fuzz_run
	FUZZ_COV_BUILD=$(BUILD)/fuzz-cov fuzz/coverage.sh $(FUZZ_COV_CORPUS)

-include $(FUZZ_OBJS:.o=.d) $(FUZZ_RUN_OBJS:.o=.d)
