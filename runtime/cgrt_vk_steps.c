/* cgrt_vk_steps.c: a Vulkan variant's steps from the manifest, and their requirements checked
 * against the device before any pipeline is created. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "cgrt_vk_exec.h"

static cg_status bad(const cgrt_executable *exe, int step, const char *what, char msg[CG_MSG_MAX]) {
    snprintf(msg, CG_MSG_MAX, "%s/manifest.json: %s, vulkan step %d: %s", exe->pack->dir,
             exe->problem.name, step, what);
    return CG_ERR_PACK;
}

/* An integral number in [min, max]. */
static int integer(const cJSON *object, const char *key, double min, double max, int64_t *out) {
    const cJSON *item = cJSON_GetObjectItemCaseSensitive(object, key);
    if (!cJSON_IsNumber(item) || item->valuedouble < min || item->valuedouble > max ||
        item->valuedouble != (double)(int64_t)item->valuedouble)
        return -1;
    *out = (int64_t)item->valuedouble;
    return 0;
}

static int buffer_of(const char *name) {
    if (!strcmp(name, "workspace")) return CG_BUF_WORKSPACE;
    for (int t = 0; t < CG_T_COUNT; t++)
        if (!strcmp(name, cg_tensor_name((cg_tensor)t))) return t;
    return -1;
}

static cg_status read_binding(const cgrt_executable *exe, int index, const cJSON *item,
                              cgrt_vk_binding *b, char msg[CG_MSG_MAX]) {
    const cgrt_vulkan_state *vk = exe->vulkan;
    const cJSON *buffer = cJSON_GetObjectItemCaseSensitive(item, "buffer");
    const cJSON *access = cJSON_GetObjectItemCaseSensitive(item, "access");
    int64_t offset, bytes;
    if (!cJSON_IsString(buffer) || (b->buffer = buffer_of(buffer->valuestring)) < 0 ||
        !cJSON_IsString(access) || integer(item, "offset", 0, 9e15, &offset) ||
        integer(item, "bytes", 1, 9e15, &bytes) || offset % 16 || bytes % 16)
        return bad(exe, index, "malformed binding", msg);
    const char *a = access->valuestring;
    b->reads = strchr(a, 'r') != NULL;
    b->writes = strchr(a, 'w') != NULL;
    b->clear = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(item, "clear"));
    b->offset = (VkDeviceSize)offset;
    b->bytes = (VkDeviceSize)bytes;
    int tensor = b->buffer != CG_BUF_WORKSPACE;
    if (tensor && !cg_problem_reads(&exe->problem, (cg_tensor)b->buffer) &&
        !cg_problem_writes(&exe->problem, (cg_tensor)b->buffer))
        return bad(exe, index, "binds a tensor the problem does not use", msg);
    /* a tensor's range is its bytes rounded up to 16; the workspace's is its size */
    VkDeviceSize limit = tensor ? (vk->region_bytes[b->buffer] + 15) & ~(VkDeviceSize)15
                                : vk->region_bytes[CG_BUF_WORKSPACE];
    if (b->offset + b->bytes > limit) return bad(exe, index, "binding outside its buffer", msg);
    if (tensor && b->reads && b->writes) return bad(exe, index, "reads and writes a tensor", msg);
    return CG_OK;
}

cg_status cgrt_vk_read_steps(cgrt_executable *exe, const cJSON *variant, char msg[CG_MSG_MAX]) {
    cgrt_vulkan_state *vk = exe->vulkan;
    const cJSON *steps = cJSON_GetObjectItemCaseSensitive(variant, "steps");
    if (cJSON_GetArraySize(steps) != exe->step_count) return bad(exe, -1, "step count", msg);
    for (int i = 0; i < exe->step_count; i++) {
        const cJSON *item = cJSON_GetArrayItem(steps, i);
        cgrt_vk_step *s = &vk->steps[i];
        s->kernel = exe->steps[i].kernel;
        const cJSON *spv = cJSON_GetObjectItemCaseSensitive(item, "spv");
        const cJSON *local = cJSON_GetObjectItemCaseSensitive(item, "local_size");
        const cJSON *features = cJSON_GetObjectItemCaseSensitive(item, "features");
        const cJSON *bindings = cJSON_GetObjectItemCaseSensitive(item, "bindings");
        int64_t push, bits;
        if (!cJSON_IsString(spv) || strstr(spv->valuestring, "..") ||
            strlen(spv->valuestring) >= sizeof s->spv || cJSON_GetArraySize(local) != 3 ||
            !cJSON_IsArray(features) || !cJSON_IsArray(bindings) ||
            integer(item, "workgroups", 0, INT32_MAX, &s->workgroups) ||
            integer(item, "shared_bytes", 0, 9e15, &s->shared_bytes) ||
            integer(item, "push_bytes", 0, 1 << 20, &push) ||
            integer(item, "index_bits", 32, 32, &bits))
            return bad(exe, i, "missing or malformed requirement", msg);
        snprintf(s->spv, sizeof s->spv, "%s", spv->valuestring);
        s->push_bytes = (uint32_t)push;
        for (int d = 0; d < 3; d++) {
            const cJSON *v = cJSON_GetArrayItem(local, d);
            if (!cJSON_IsNumber(v) || v->valuedouble < 1 || v->valuedouble > 65536)
                return bad(exe, i, "local_size", msg);
            s->local_size[d] = (uint32_t)v->valuedouble;
        }
        const cJSON *feature;
        cJSON_ArrayForEach(feature, features) {
            unsigned bit = cJSON_IsString(feature) ? cgrt_vk_feature_bit(feature->valuestring) : 0;
            if (!bit) {
                snprintf(msg, CG_MSG_MAX, "%s: needs device feature '%s', unknown to this runtime",
                         s->kernel, cJSON_IsString(feature) ? feature->valuestring : "?");
                return CG_ERR_UNSUPPORTED;
            }
            s->features |= bit;
        }
        s->binding_count = cJSON_GetArraySize(bindings);
        if (s->binding_count < 1 || s->binding_count > CGRT_VK_MAX_BINDINGS)
            return bad(exe, i, "binding count", msg);
        for (int j = 0; j < s->binding_count; j++) {
            cg_status status =
                read_binding(exe, i, cJSON_GetArrayItem(bindings, j), &s->bindings[j], msg);
            if (status != CG_OK) return status;
        }
    }
    return CG_OK;
}

static cg_status limit(const cgrt_vk_step *s, const char *what, uint64_t value, const char *unit,
                       uint64_t device, const char *name, char msg[CG_MSG_MAX]) {
    snprintf(msg, CG_MSG_MAX, "%s: %s %" PRIu64 "%s exceeds the device limit %" PRIu64 "%s (%s)",
             s->kernel, what, value, unit, device, unit, name);
    return CG_ERR_LIMIT;
}

cg_status cgrt_vk_check_limits(const cgrt_executable *exe, char msg[CG_MSG_MAX]) {
    const cgrt_vulkan_state *vk = exe->vulkan;
    const cgrt_vk_context *c = vk->context;
    const VkPhysicalDeviceLimits *l = &c->properties.limits;
    for (int i = 0; i < vk->step_count; i++) {
        const cgrt_vk_step *s = &vk->steps[i];
        if ((uint64_t)s->shared_bytes > l->maxComputeSharedMemorySize)
            return limit(s, "shared memory", (uint64_t)s->shared_bytes, " B",
                         l->maxComputeSharedMemorySize, "maxComputeSharedMemorySize", msg);
        uint64_t invocations = 1;
        for (int d = 0; d < 3; d++) {
            if (s->local_size[d] > l->maxComputeWorkGroupSize[d])
                return limit(s, "workgroup size", s->local_size[d], "",
                             l->maxComputeWorkGroupSize[d], "maxComputeWorkGroupSize", msg);
            invocations *= s->local_size[d];
        }
        if (invocations > l->maxComputeWorkGroupInvocations)
            return limit(s, "workgroup of", invocations, " invocations",
                         l->maxComputeWorkGroupInvocations, "maxComputeWorkGroupInvocations", msg);
        if (s->push_bytes > l->maxPushConstantsSize)
            return limit(s, "push constant block", s->push_bytes, " B", l->maxPushConstantsSize,
                         "maxPushConstantsSize", msg);
        if (s->push_bytes != sizeof(cg_kernel_params)) {
            snprintf(msg, CG_MSG_MAX, "%s: push constants of %u B, not the ABI's %zu B", s->kernel,
                     s->push_bytes, sizeof(cg_kernel_params));
            return CG_ERR_PACK;
        }
        /* no workgroup-count limit: the runtime spreads a grid over x, y and several
         * dispatches (work_begin) */
        for (int j = 0; j < s->binding_count; j++) {
            const cgrt_vk_binding *b = &s->bindings[j];
            if (b->bytes > l->maxStorageBufferRange)
                return limit(s, "storage buffer range", b->bytes, " B", l->maxStorageBufferRange,
                             "maxStorageBufferRange", msg);
            VkDeviceSize at = vk->region_offset[b->buffer] + b->offset;
            if (at % l->minStorageBufferOffsetAlignment) {
                snprintf(msg, CG_MSG_MAX,
                         "%s: buffer offset %llu is not a multiple of the device's "
                         "minStorageBufferOffsetAlignment %llu",
                         s->kernel, (unsigned long long)at,
                         (unsigned long long)l->minStorageBufferOffsetAlignment);
                return CG_ERR_LIMIT;
            }
        }
        unsigned missing = s->features & ~c->features;
        if (missing) {
            unsigned bit = missing & (~missing + 1);
            snprintf(msg, CG_MSG_MAX, "%s: needs the device feature %s, which %s lacks", s->kernel,
                     cgrt_vk_feature_vulkan_name(bit), c->properties.deviceName);
            return CG_ERR_UNSUPPORTED;
        }
    }
    return CG_OK;
}
