// malloc_trim(0) for Node, on a libuv pool thread. glibc keeps memory a process freed (holes in
// its heaps, and a top it trims only past a threshold that rises with big frees); an import's
// transient buffers (request bodies, decoded ID arrays, mutable bitmaps before packing) leave
// tens of MB resident that no later allocation may need. malloc_trim gives the free pages of
// every arena back to the kernel. No npm package exposes it, and a general FFI library for one
// libc call would be a larger native dependency than this file. Elsewhere than glibc: a no-op.
#include <node_api.h>
#include <stdlib.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif

typedef struct {
  napi_async_work work;
  napi_deferred deferred;
  int released;
} Job;

static void execute(napi_env env, void* data) {
  (void)env;
  Job* job = (Job*)data;
#ifdef __GLIBC__
  job->released = malloc_trim(0);
#else
  job->released = 0;
#endif
}

static void complete(napi_env env, napi_status status, void* data) {
  Job* job = (Job*)data;
  napi_value result;
  napi_get_boolean(env, status == napi_ok && job->released != 0, &result);
  napi_resolve_deferred(env, job->deferred, result);
  napi_delete_async_work(env, job->work);
  free(job);
}

// trim(): Promise<boolean>, whether any memory went back to the kernel.
static napi_value trim(napi_env env, napi_callback_info info) {
  (void)info;
  napi_value promise, name;
  Job* job = (Job*)calloc(1, sizeof(Job));
  if (job == NULL) {
    napi_throw_error(env, NULL, "out of memory");
    return NULL;
  }
  napi_create_promise(env, &job->deferred, &promise);
  napi_create_string_utf8(env, "bitledger.mallocTrim", NAPI_AUTO_LENGTH, &name);
  napi_create_async_work(env, NULL, name, execute, complete, job, &job->work);
  napi_queue_async_work(env, job->work);
  return promise;
}

// tune(arenaMax, mmapThreshold): mallopt for allocations from now on; whether glibc took both.
static napi_value tune(napi_env env, napi_callback_info info) {
  size_t argc = 2;
  napi_value argv[2], result;
  int32_t arena_max = 0, mmap_threshold = 0;
  napi_get_cb_info(env, info, &argc, argv, NULL, NULL);
  if (argc < 2 || napi_get_value_int32(env, argv[0], &arena_max) != napi_ok ||
      napi_get_value_int32(env, argv[1], &mmap_threshold) != napi_ok) {
    napi_throw_type_error(env, NULL, "tune(arenaMax, mmapThreshold) takes two integers");
    return NULL;
  }
#ifdef __GLIBC__
  int ok = mallopt(M_ARENA_MAX, arena_max) == 1 && mallopt(M_MMAP_THRESHOLD, mmap_threshold) == 1;
#else
  int ok = 0;
#endif
  napi_get_boolean(env, ok, &result);
  return result;
}

// supported: whether trim() can release anything here (glibc).
NAPI_MODULE_INIT() {
  napi_value fn, supported;
  napi_create_function(env, "trim", NAPI_AUTO_LENGTH, trim, NULL, &fn);
  napi_set_named_property(env, exports, "trim", fn);
  napi_create_function(env, "tune", NAPI_AUTO_LENGTH, tune, NULL, &fn);
  napi_set_named_property(env, exports, "tune", fn);
#ifdef __GLIBC__
  napi_get_boolean(env, 1, &supported);
#else
  napi_get_boolean(env, 0, &supported);
#endif
  napi_set_named_property(env, exports, "supported", supported);
  return exports;
}
