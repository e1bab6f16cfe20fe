/* cgrt_vulkan.c: the Vulkan target: an executable's device resources, its command buffer, and
 * runs.
 *
 * At prepare (once per executable): one device-local buffer holding every tensor of the problem
 * and the workspace (one allocation, each region 256-byte aligned and bound as its own
 * descriptor range), a host staging buffer when the device memory is not host-visible (discrete
 * GPUs), every pipeline (created up front, in one call, after its requirements passed the
 * device-limit checks), one descriptor set per step, and ONE command buffer recorded for all
 * steps: uploads, dispatches with exactly the barriers their buffer ranges need, downloads,
 * timestamps. A run copies the inputs in, submits that command buffer, waits, and copies the
 * outputs out.
 *
 * Environment: CONVGRAD_VK_STAGING=1 uses a staging buffer even on host-visible memory (tests
 * the discrete-GPU path on lavapipe); CONVGRAD_VK_POISON=1 fills outputs and workspace with NaN
 * bytes before every run, so a position no kernel writes cannot pass a test;
 * CONVGRAD_VK_GRID_CAP=N caps both dimensions of a dispatch at N workgroups, so that the
 * spreading of long grids over y and over several dispatches runs on small test problems.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cgrt_vk_exec.h"

static int env_on(const char *name) {
    const char *v = getenv(name);
    return v && *v && strcmp(v, "0") != 0;
}

static VkDeviceSize align_up(VkDeviceSize v, VkDeviceSize a) {
    return (v + a - 1) / a * a;
}

/* Regions of the device buffer: the problem's tensors in cg_tensor order, then the workspace. */
static void layout_regions(cgrt_executable *exe) {
    cgrt_vulkan_state *vk = exe->vulkan;
    const cg_problem *p = &exe->problem;
    VkDeviceSize at = 0;
    for (int t = 0; t < CG_T_COUNT; t++) {
        if (!cg_problem_reads(p, (cg_tensor)t) && !cg_problem_writes(p, (cg_tensor)t)) continue;
        vk->region_offset[t] = at;
        vk->region_bytes[t] =
            (VkDeviceSize)cg_tensor_elems(p, (cg_tensor)t) * cg_dtype_size(p->dtype);
        at = align_up(at + align_up(vk->region_bytes[t], 16), 256);
    }
    vk->tensor_end = at;
    vk->region_offset[CG_BUF_WORKSPACE] = at;
    vk->region_bytes[CG_BUF_WORKSPACE] = align_up((VkDeviceSize)exe->workspace_bytes, 256);
    vk->total_bytes = at + vk->region_bytes[CG_BUF_WORKSPACE];
    if (!vk->total_bytes) vk->total_bytes = 256;
}

static cg_status create_buffer(cgrt_vk_context *c, VkDeviceSize bytes, VkBufferUsageFlags usage,
                               VkMemoryPropertyFlags required, VkMemoryPropertyFlags preferred,
                               VkBuffer *buffer, VkDeviceMemory *memory, VkMemoryPropertyFlags *got,
                               char msg[CG_MSG_MAX]) {
    VkBufferCreateInfo info = {.sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO,
                               .size = bytes,
                               .usage = usage,
                               .sharingMode = VK_SHARING_MODE_EXCLUSIVE};
    cg_status status = cgrt_vk_check(c, c->fn.vkCreateBuffer(c->device, &info, NULL, buffer),
                                     "vkCreateBuffer", msg);
    if (status != CG_OK) return status;
    VkMemoryRequirements req;
    c->fn.vkGetBufferMemoryRequirements(c->device, *buffer, &req);
    int type = cgrt_vk_memory_type(c, req.memoryTypeBits, required, preferred);
    if (type < 0) {
        snprintf(msg, CG_MSG_MAX, "Vulkan: %s has no suitable memory type for %llu bytes",
                 c->properties.deviceName, (unsigned long long)bytes);
        return CG_ERR_DEVICE;
    }
    *got = c->memory.memoryTypes[type].propertyFlags;
    VkMemoryAllocateInfo alloc = {.sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO,
                                  .allocationSize = req.size,
                                  .memoryTypeIndex = (uint32_t)type};
    char what[96];
    snprintf(what, sizeof what, "vkAllocateMemory (%llu bytes)", (unsigned long long)req.size);
    status = cgrt_vk_check(c, c->fn.vkAllocateMemory(c->device, &alloc, NULL, memory), what, msg);
    if (status == CG_OK)
        status = cgrt_vk_check(c, c->fn.vkBindBufferMemory(c->device, *buffer, *memory, 0),
                               "vkBindBufferMemory", msg);
    return status;
}

/* Device-local memory; mapped directly when it is also host-visible and the device is not a
 * discrete GPU (there a host mapping would be PCIe or BAR memory: staged copies instead). */
static cg_status create_buffers(cgrt_vulkan_state *vk, char msg[CG_MSG_MAX]) {
    cgrt_vk_context *c = vk->context;
    VkBufferUsageFlags usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT |
                               VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT;
    int discrete = c->properties.deviceType == VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU;
    VkMemoryPropertyFlags host =
        VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
    VkMemoryPropertyFlags got = 0;
    cg_status status = create_buffer(c, vk->total_bytes, usage, VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT,
                                     discrete ? 0 : host, &vk->buffer, &vk->memory, &got, msg);
    if (status != CG_OK) return status;
    int direct = !discrete && (got & host) == host && !env_on("CONVGRAD_VK_STAGING");
    if (direct)
        return cgrt_vk_check(
            c, c->fn.vkMapMemory(c->device, vk->memory, 0, VK_WHOLE_SIZE, 0, &vk->mapped),
            "vkMapMemory", msg);
    if (!vk->tensor_end) return CG_OK;
    status = create_buffer(
        c, vk->tensor_end, VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT,
        host, VK_MEMORY_PROPERTY_HOST_CACHED_BIT, &vk->staging, &vk->staging_memory, &got, msg);
    if (status == CG_OK)
        status = cgrt_vk_check(c,
                               c->fn.vkMapMemory(c->device, vk->staging_memory, 0, VK_WHOLE_SIZE, 0,
                                                 &vk->staging_mapped),
                               "vkMapMemory", msg);
    return status;
}

static cg_status read_file(const char *path, uint32_t **code, size_t *size, char msg[CG_MSG_MAX]) {
    FILE *file = fopen(path, "rb");
    long length = -1;
    if (file && fseek(file, 0, SEEK_END) == 0) length = ftell(file);
    *code = NULL;
    if (length > 0 && length % 4 == 0 && length < (64L << 20)) *code = malloc((size_t)length);
    if (file && *code && fseek(file, 0, SEEK_SET) == 0 &&
        fread(*code, 1, (size_t)length, file) == (size_t)length) {
        fclose(file);
        *size = (size_t)length;
        return CG_OK;
    }
    if (file) fclose(file);
    free(*code);
    *code = NULL;
    snprintf(msg, CG_MSG_MAX, "%s: missing or not a SPIR-V module (run convgrad build)", path);
    return CG_ERR_PACK;
}

/* Descriptor set layouts, pipeline layouts and all pipelines (one vkCreateComputePipelines). */
static cg_status create_pipelines(cgrt_executable *exe, char msg[CG_MSG_MAX]) {
    cgrt_vulkan_state *vk = exe->vulkan;
    cgrt_vk_context *c = vk->context;
    cg_status status = CG_OK;
    VkShaderModule *modules = calloc((size_t)vk->step_count, sizeof *modules);
    VkComputePipelineCreateInfo *infos = calloc((size_t)vk->step_count, sizeof *infos);
    VkPipeline *pipelines = calloc((size_t)vk->step_count, sizeof *pipelines);
    if (!modules || !infos || !pipelines) {
        snprintf(msg, CG_MSG_MAX, "out of memory");
        status = CG_ERR_NOMEM;
    }
    for (int i = 0; i < vk->step_count && status == CG_OK; i++) {
        cgrt_vk_step *s = &vk->steps[i];
        VkDescriptorSetLayoutBinding bindings[CGRT_VK_MAX_BINDINGS];
        for (int j = 0; j < s->binding_count; j++)
            bindings[j] =
                (VkDescriptorSetLayoutBinding){.binding = (uint32_t)j,
                                               .descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
                                               .descriptorCount = 1,
                                               .stageFlags = VK_SHADER_STAGE_COMPUTE_BIT};
        VkDescriptorSetLayoutCreateInfo set_info = {
            .sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO,
            .bindingCount = (uint32_t)s->binding_count,
            .pBindings = bindings};
        status = cgrt_vk_check(
            c, c->fn.vkCreateDescriptorSetLayout(c->device, &set_info, NULL, &s->set_layout),
            "vkCreateDescriptorSetLayout", msg);
        VkPushConstantRange push = {.stageFlags = VK_SHADER_STAGE_COMPUTE_BIT,
                                    .size = s->push_bytes};
        VkPipelineLayoutCreateInfo layout_info = {.sType =
                                                      VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO,
                                                  .setLayoutCount = 1,
                                                  .pSetLayouts = &s->set_layout,
                                                  .pushConstantRangeCount = 1,
                                                  .pPushConstantRanges = &push};
        if (status == CG_OK)
            status = cgrt_vk_check(
                c, c->fn.vkCreatePipelineLayout(c->device, &layout_info, NULL, &s->layout),
                "vkCreatePipelineLayout", msg);
        char path[4400];
        snprintf(path, sizeof path, "%s/%s", exe->pack->dir, s->spv);
        uint32_t *code = NULL;
        size_t size = 0;
        if (status == CG_OK) status = read_file(path, &code, &size, msg);
        VkShaderModuleCreateInfo module_info = {
            .sType = VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO, .codeSize = size, .pCode = code};
        if (status == CG_OK)
            status = cgrt_vk_check(
                c, c->fn.vkCreateShaderModule(c->device, &module_info, NULL, &modules[i]),
                "vkCreateShaderModule", msg);
        free(code);
        infos[i] = (VkComputePipelineCreateInfo){
            .sType = VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO,
            .stage = {.sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO,
                      .stage = VK_SHADER_STAGE_COMPUTE_BIT,
                      .module = modules[i],
                      .pName = "main"},
            .layout = s->layout};
    }
    if (status == CG_OK && vk->step_count > 0)
        status = cgrt_vk_check(c,
                               c->fn.vkCreateComputePipelines(c->device, VK_NULL_HANDLE,
                                                              (uint32_t)vk->step_count, infos, NULL,
                                                              pipelines),
                               "vkCreateComputePipelines", msg);
    for (int i = 0; i < vk->step_count; i++) {
        if (status == CG_OK) vk->steps[i].pipeline = pipelines[i];
        if (modules && modules[i]) c->fn.vkDestroyShaderModule(c->device, modules[i], NULL);
    }
    free(modules);
    free(infos);
    free(pipelines);
    return status;
}

static cg_status create_descriptors(cgrt_vulkan_state *vk, char msg[CG_MSG_MAX]) {
    cgrt_vk_context *c = vk->context;
    uint32_t total = 0;
    for (int i = 0; i < vk->step_count; i++)
        total += (uint32_t)vk->steps[i].binding_count;
    VkDescriptorPoolSize size = {.type = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
                                 .descriptorCount = total ? total : 1};
    VkDescriptorPoolCreateInfo info = {.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO,
                                       .maxSets = (uint32_t)(vk->step_count ? vk->step_count : 1),
                                       .poolSizeCount = 1,
                                       .pPoolSizes = &size};
    cg_status status =
        cgrt_vk_check(c, c->fn.vkCreateDescriptorPool(c->device, &info, NULL, &vk->pool),
                      "vkCreateDescriptorPool", msg);
    for (int i = 0; i < vk->step_count && status == CG_OK; i++) {
        cgrt_vk_step *s = &vk->steps[i];
        VkDescriptorSetAllocateInfo alloc = {.sType =
                                                 VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO,
                                             .descriptorPool = vk->pool,
                                             .descriptorSetCount = 1,
                                             .pSetLayouts = &s->set_layout};
        status = cgrt_vk_check(c, c->fn.vkAllocateDescriptorSets(c->device, &alloc, &s->set),
                               "vkAllocateDescriptorSets", msg);
        VkDescriptorBufferInfo buffers[CGRT_VK_MAX_BINDINGS];
        VkWriteDescriptorSet writes[CGRT_VK_MAX_BINDINGS];
        for (int j = 0; j < s->binding_count && status == CG_OK; j++) {
            const cgrt_vk_binding *b = &s->bindings[j];
            buffers[j] =
                (VkDescriptorBufferInfo){.buffer = vk->buffer,
                                         .offset = vk->region_offset[b->buffer] + b->offset,
                                         .range = b->bytes};
            writes[j] = (VkWriteDescriptorSet){.sType = VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET,
                                               .dstSet = s->set,
                                               .dstBinding = (uint32_t)j,
                                               .descriptorCount = 1,
                                               .descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
                                               .pBufferInfo = &buffers[j]};
        }
        if (status == CG_OK)
            c->fn.vkUpdateDescriptorSets(c->device, (uint32_t)s->binding_count, writes, 0, NULL);
    }
    return status;
}

/* ---- recording ---- */

typedef struct access {
    VkDeviceSize begin, end;
    int reads, writes;
    int group; /* concurrent group of the step that made it */
} access;

typedef struct tracker {
    access pending[64]; /* accesses since the last barrier */
    int count;
    int group;  /* current concurrent group (a run of steps marked concurrent) */
    int strict; /* CONVGRAD_VK_STRICT_BARRIERS: order writes of one group too */
} tracker;

static void barrier(const cgrt_vk_context *c, VkCommandBuffer cmd, VkPipelineStageFlags src_stage,
                    VkAccessFlags src, VkPipelineStageFlags dst_stage, VkAccessFlags dst) {
    VkMemoryBarrier b = {
        .sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER, .srcAccessMask = src, .dstAccessMask = dst};
    c->fn.vkCmdPipelineBarrier(cmd, src_stage, dst_stage, 0, 1, &b, 0, NULL, 0, NULL);
}

/* A compute->compute barrier before a dispatch exactly when one of its ranges overlaps a range
 * written since the last barrier and it reads it (RAW) or writes it (WAW), or it writes a range
 * read since then (WAR). One exception, from the plan's contract: steps of one concurrent group
 * (a plan region) read only what earlier groups wrote and write disjoint elements (the stride
 * phases of dx and the zero-fill share dx's range but never an element). Writes to disjoint
 * memory locations are not a data race in the Vulkan memory model, so two such writes need no
 * barrier and the phases can overlap on the device. CONVGRAD_VK_STRICT_BARRIERS=1 orders them
 * anyway (for validation layers that track hazards by range, not by element). */
static void order_dispatch(const cgrt_vulkan_state *vk, const cgrt_vk_step *s, tracker *t) {
    int needed = t->count + s->binding_count > 64;
    for (int j = 0; j < s->binding_count && !needed; j++) {
        const cgrt_vk_binding *b = &s->bindings[j];
        VkDeviceSize begin = vk->region_offset[b->buffer] + b->offset, end = begin + b->bytes;
        for (int k = 0; k < t->count && !needed; k++) {
            const access *a = &t->pending[k];
            if (begin >= a->end || a->begin >= end) continue;
            int raw = a->writes && b->reads, war = a->reads && b->writes;
            int waw = a->writes && b->writes && (t->strict || a->group != t->group);
            needed = raw || war || waw;
        }
    }
    if (needed) {
        barrier(vk->context, vk->command, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
                VK_ACCESS_SHADER_WRITE_BIT, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
                VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT);
        t->count = 0;
    }
    for (int j = 0; j < s->binding_count; j++) {
        const cgrt_vk_binding *b = &s->bindings[j];
        VkDeviceSize begin = vk->region_offset[b->buffer] + b->offset;
        t->pending[t->count++] = (access){begin, begin + b->bytes, b->reads, b->writes, t->group};
    }
}

static void record_dispatches(const cgrt_vulkan_state *vk, const cgrt_vk_step *s, tracker *t) {
    const cgrt_vk_context *c = vk->context;
    const VkPhysicalDeviceLimits *l = &c->properties.limits;
    VkCommandBuffer cmd = vk->command;
    c->fn.vkCmdBindPipeline(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, s->pipeline);
    c->fn.vkCmdBindDescriptorSets(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, s->layout, 0, 1, &s->set, 0,
                                  NULL);
    /* A grid longer than maxComputeWorkGroupCount[0] goes over y, then over several dispatches
     * whose first workgroup is passed as work_begin; the shaders return past work_end. */
    int64_t max_x = l->maxComputeWorkGroupCount[0], max_y = l->maxComputeWorkGroupCount[1];
    if (vk->grid_cap > 0) { /* CONVGRAD_VK_GRID_CAP: exercise this path on small problems */
        if (max_x > vk->grid_cap) max_x = vk->grid_cap;
        if (max_y > vk->grid_cap) max_y = vk->grid_cap;
    }
    for (int64_t begin = 0; begin < s->workgroups;) {
        int64_t left = s->workgroups - begin;
        int64_t x = left < max_x ? left : max_x;
        int64_t y = (left + x - 1) / x;
        if (y > max_y) y = max_y;
        cg_kernel_params params;
        memset(&params, 0, sizeof params);
        params.work_begin = (int32_t)begin;
        params.work_end = (int32_t)s->workgroups;
        order_dispatch(vk, s, t);
        c->fn.vkCmdPushConstants(cmd, s->layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, s->push_bytes,
                                 &params);
        c->fn.vkCmdDispatch(cmd, (uint32_t)x, (uint32_t)y, 1);
        begin += x * y;
    }
}

static void fill(const cgrt_vulkan_state *vk, VkDeviceSize offset, VkDeviceSize bytes,
                 uint32_t value) {
    bytes = align_up(bytes, 4);
    if (bytes) vk->context->fn.vkCmdFillBuffer(vk->command, vk->buffer, offset, bytes, value);
}

static cg_status record(cgrt_executable *exe, char msg[CG_MSG_MAX]) {
    cgrt_vulkan_state *vk = exe->vulkan;
    const cgrt_vk_context *c = vk->context;
    const cg_problem *p = &exe->problem;
    VkCommandBuffer cmd = vk->command;
    VkCommandBufferBeginInfo begin = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
    cg_status status = cgrt_vk_check(vk->context, c->fn.vkBeginCommandBuffer(cmd, &begin),
                                     "vkBeginCommandBuffer", msg);
    if (status != CG_OK) return status;
    const VkAccessFlags all = VK_ACCESS_TRANSFER_READ_BIT | VK_ACCESS_TRANSFER_WRITE_BIT |
                              VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT;
    const VkPipelineStageFlags both =
        VK_PIPELINE_STAGE_TRANSFER_BIT | VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT;
    /* The command buffer is submitted once per run: order it after the previous submission. */
    barrier(c, cmd, both, VK_ACCESS_TRANSFER_WRITE_BIT | VK_ACCESS_SHADER_WRITE_BIT, both, all);
    if (vk->queries) c->fn.vkCmdResetQueryPool(cmd, vk->queries, 0, 2);
    int transfers = 0;
    if (vk->poison) {
        for (int t = 0; t < CG_T_COUNT; t++)
            if (cg_problem_writes(p, (cg_tensor)t))
                fill(vk, vk->region_offset[t], vk->region_bytes[t], 0xffffffffu);
        fill(vk, vk->region_offset[CG_BUF_WORKSPACE], vk->region_bytes[CG_BUF_WORKSPACE],
             0xffffffffu);
        transfers = 1;
    }
    for (int i = 0; i < vk->step_count; i++)
        for (int j = 0; j < vk->steps[i].binding_count; j++) {
            const cgrt_vk_binding *b = &vk->steps[i].bindings[j];
            if (!b->clear) continue;
            if (transfers) /* after the poison fill of the same bytes */
                barrier(c, cmd, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_WRITE_BIT,
                        VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_WRITE_BIT);
            fill(vk, vk->region_offset[b->buffer] + b->offset, b->bytes, 0);
            transfers = 1;
        }
    if (vk->staging)
        for (int t = 0; t < CG_T_COUNT; t++) {
            if (!cg_problem_reads(p, (cg_tensor)t) || !vk->region_bytes[t]) continue;
            VkBufferCopy copy = {vk->region_offset[t], vk->region_offset[t], vk->region_bytes[t]};
            c->fn.vkCmdCopyBuffer(cmd, vk->staging, vk->buffer, 1, &copy);
            transfers = 1;
        }
    if (transfers)
        barrier(c, cmd, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_WRITE_BIT,
                VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
                VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT);
    if (vk->queries)
        c->fn.vkCmdWriteTimestamp(cmd, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, vk->queries, 0);
    tracker t = {.count = 0, .strict = env_on("CONVGRAD_VK_STRICT_BARRIERS")};
    for (int i = 0; i < vk->step_count; i++) {
        if (!exe->steps[i].concurrent) t.group++;
        if (vk->steps[i].workgroups > 0) record_dispatches(vk, &vk->steps[i], &t);
    }
    if (vk->queries)
        c->fn.vkCmdWriteTimestamp(cmd, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, vk->queries, 1);
    if (vk->staging) {
        barrier(c, cmd, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_ACCESS_SHADER_WRITE_BIT,
                VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_READ_BIT);
        for (int k = 0; k < CG_T_COUNT; k++) {
            if (!cg_problem_writes(p, (cg_tensor)k) || !vk->region_bytes[k]) continue;
            VkBufferCopy copy = {vk->region_offset[k], vk->region_offset[k], vk->region_bytes[k]};
            c->fn.vkCmdCopyBuffer(cmd, vk->buffer, vk->staging, 1, &copy);
        }
        barrier(c, cmd, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_WRITE_BIT,
                VK_PIPELINE_STAGE_HOST_BIT, VK_ACCESS_HOST_READ_BIT);
    } else {
        barrier(c, cmd, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_ACCESS_SHADER_WRITE_BIT,
                VK_PIPELINE_STAGE_HOST_BIT, VK_ACCESS_HOST_READ_BIT);
    }
    return cgrt_vk_check(vk->context, c->fn.vkEndCommandBuffer(cmd), "vkEndCommandBuffer", msg);
}

static cg_status create_commands(cgrt_vulkan_state *vk, char msg[CG_MSG_MAX]) {
    cgrt_vk_context *c = vk->context;
    VkCommandPoolCreateInfo pool = {.sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO,
                                    .queueFamilyIndex = c->queue_family};
    cg_status status =
        cgrt_vk_check(c, c->fn.vkCreateCommandPool(c->device, &pool, NULL, &vk->command_pool),
                      "vkCreateCommandPool", msg);
    VkCommandBufferAllocateInfo alloc = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO,
                                         .commandPool = vk->command_pool,
                                         .level = VK_COMMAND_BUFFER_LEVEL_PRIMARY,
                                         .commandBufferCount = 1};
    if (status == CG_OK)
        status = cgrt_vk_check(c, c->fn.vkAllocateCommandBuffers(c->device, &alloc, &vk->command),
                               "vkAllocateCommandBuffers", msg);
    VkFenceCreateInfo fence = {.sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
    if (status == CG_OK)
        status = cgrt_vk_check(c, c->fn.vkCreateFence(c->device, &fence, NULL, &vk->fence),
                               "vkCreateFence", msg);
    if (status == CG_OK && c->timestamp_bits > 0) {
        VkQueryPoolCreateInfo query = {.sType = VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO,
                                       .queryType = VK_QUERY_TYPE_TIMESTAMP,
                                       .queryCount = 2};
        status = cgrt_vk_check(c, c->fn.vkCreateQueryPool(c->device, &query, NULL, &vk->queries),
                               "vkCreateQueryPool", msg);
    }
    return status;
}

cg_status cgrt_vulkan_prepare(cgrt_executable *exe, const cJSON *variant, char msg[CG_MSG_MAX]) {
    cgrt_vulkan_state *vk = calloc(1, sizeof *vk);
    if (vk) vk->steps = calloc((size_t)(exe->step_count ? exe->step_count : 1), sizeof *vk->steps);
    if (!vk || !vk->steps) {
        if (vk) free(vk);
        snprintf(msg, CG_MSG_MAX, "out of memory");
        return CG_ERR_NOMEM;
    }
    pthread_mutex_init(&vk->lock, NULL);
    exe->vulkan = vk;
    vk->step_count = exe->step_count;
    vk->last_ms = -1.0;
    vk->poison = env_on("CONVGRAD_VK_POISON");
    const char *cap = getenv("CONVGRAD_VK_GRID_CAP");
    vk->grid_cap = cap ? atoi(cap) : 0;
    layout_regions(exe);
    cg_status status = cgrt_vk_read_steps(exe, variant, msg);
    if (status == CG_OK) status = cgrt_vk_context_acquire(&vk->context, msg);
    if (status != CG_OK) return status; /* cgrt_executable_destroy releases what is there */
    int messages = cgrt_vk_message_count(vk->context);
    status = cgrt_vk_check_limits(exe, msg);
    if (status == CG_OK) status = create_buffers(vk, msg);
    if (status == CG_OK) status = create_pipelines(exe, msg);
    if (status == CG_OK) status = create_descriptors(vk, msg);
    if (status == CG_OK) status = create_commands(vk, msg);
    if (status == CG_OK) status = record(exe, msg);
    if (status == CG_OK)
        status = cgrt_vk_messages_since(vk->context, messages, exe->problem.name, msg);
    return status;
}

cg_status cgrt_vulkan_run(const cgrt_executable *exe, void *const tensors[CG_T_COUNT],
                          char msg[CG_MSG_MAX]) {
    cgrt_vulkan_state *vk = exe->vulkan;
    cgrt_vk_context *c = vk->context;
    const cg_problem *p = &exe->problem;
    if (c->lost) {
        snprintf(msg, CG_MSG_MAX, "%s: the Vulkan device was lost earlier; recreate the executable",
                 p->name);
        return CG_ERR_DEVICE;
    }
    pthread_mutex_lock(&vk->lock);
    int messages = cgrt_vk_message_count(c);
    char *host = vk->mapped ? vk->mapped : vk->staging_mapped;
    for (int t = 0; t < CG_T_COUNT; t++)
        if (cg_problem_reads(p, (cg_tensor)t) && vk->region_bytes[t])
            memcpy(host + vk->region_offset[t], tensors[t], vk->region_bytes[t]);
    VkSubmitInfo submit = {.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO,
                           .commandBufferCount = 1,
                           .pCommandBuffers = &vk->command};
    pthread_mutex_lock(&c->queue_lock);
    VkResult result = c->fn.vkQueueSubmit(c->queue, 1, &submit, vk->fence);
    pthread_mutex_unlock(&c->queue_lock);
    cg_status status = cgrt_vk_check(c, result, "vkQueueSubmit", msg);
    if (status == CG_OK)
        status =
            cgrt_vk_check(c, c->fn.vkWaitForFences(c->device, 1, &vk->fence, VK_TRUE, UINT64_MAX),
                          "vkWaitForFences", msg);
    if (status == CG_OK)
        status =
            cgrt_vk_check(c, c->fn.vkResetFences(c->device, 1, &vk->fence), "vkResetFences", msg);
    if (status == CG_OK && vk->queries) {
        uint64_t stamps[2];
        result = c->fn.vkGetQueryPoolResults(c->device, vk->queries, 0, 2, sizeof stamps, stamps,
                                             sizeof stamps[0],
                                             VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WAIT_BIT);
        status = cgrt_vk_check(c, result, "vkGetQueryPoolResults", msg);
        uint64_t mask = c->timestamp_bits >= 64 ? ~0ull : (1ull << c->timestamp_bits) - 1;
        if (status == CG_OK)
            vk->last_ms = (double)((stamps[1] - stamps[0]) & mask) *
                          c->properties.limits.timestampPeriod * 1e-6;
    }
    if (status == CG_OK)
        for (int t = 0; t < CG_T_COUNT; t++)
            if (cg_problem_writes(p, (cg_tensor)t) && vk->region_bytes[t])
                memcpy(tensors[t], host + vk->region_offset[t], vk->region_bytes[t]);
    if (status == CG_OK) status = cgrt_vk_messages_since(c, messages, p->name, msg);
    pthread_mutex_unlock(&vk->lock);
    return status;
}

void cgrt_vulkan_release(cgrt_executable *exe) {
    cgrt_vulkan_state *vk = exe->vulkan;
    if (!vk) return;
    cgrt_vk_context *c = vk->context;
    if (c) {
        VkDevice d = c->device; /* idle: every run waits for its fence before returning */
        for (int i = 0; i < vk->step_count; i++) {
            cgrt_vk_step *s = &vk->steps[i];
            if (s->pipeline) c->fn.vkDestroyPipeline(d, s->pipeline, NULL);
            if (s->layout) c->fn.vkDestroyPipelineLayout(d, s->layout, NULL);
            if (s->set_layout) c->fn.vkDestroyDescriptorSetLayout(d, s->set_layout, NULL);
        }
        if (vk->queries) c->fn.vkDestroyQueryPool(d, vk->queries, NULL);
        if (vk->fence) c->fn.vkDestroyFence(d, vk->fence, NULL);
        if (vk->command_pool) c->fn.vkDestroyCommandPool(d, vk->command_pool, NULL);
        if (vk->pool) c->fn.vkDestroyDescriptorPool(d, vk->pool, NULL);
        if (vk->buffer) c->fn.vkDestroyBuffer(d, vk->buffer, NULL);
        if (vk->memory) c->fn.vkFreeMemory(d, vk->memory, NULL);
        if (vk->staging) c->fn.vkDestroyBuffer(d, vk->staging, NULL);
        if (vk->staging_memory) c->fn.vkFreeMemory(d, vk->staging_memory, NULL);
        cgrt_vk_context_release(c);
    }
    pthread_mutex_destroy(&vk->lock);
    free(vk->steps);
    free(vk);
    exe->vulkan = NULL;
}

double cgrt_vulkan_last_ms(const cgrt_executable *exe) {
    return exe->vulkan ? exe->vulkan->last_ms : -1.0;
}
