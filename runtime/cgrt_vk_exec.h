/* cgrt_vk_exec.h: one Vulkan executable's state, shared by cgrt_vk_steps.c (reading the
 * manifest variant and checking it against the device) and cgrt_vulkan.c (resources, command
 * buffer, runs). */
#ifndef CGRT_VK_EXEC_H
#define CGRT_VK_EXEC_H

#include "cgrt_internal.h"
#include "cgrt_vk.h"

#define CGRT_VK_MAX_BINDINGS 4

typedef struct cgrt_vk_binding {
    int buffer;          /* cg_tensor, or CG_BUF_WORKSPACE */
    VkDeviceSize offset; /* bytes from the start of that buffer's region */
    VkDeviceSize bytes;  /* range bound (multiple of 16) */
    int reads, writes, clear;
} cgrt_vk_binding;

typedef struct cgrt_vk_step {
    const char *kernel; /* the executable's step name */
    char spv[512];      /* path relative to the pack */
    uint32_t local_size[3];
    int64_t workgroups;
    int64_t shared_bytes;
    uint32_t push_bytes;
    unsigned features; /* CGRT_VK_FEATURE_* */
    int binding_count;
    cgrt_vk_binding bindings[CGRT_VK_MAX_BINDINGS];
    VkDescriptorSetLayout set_layout;
    VkPipelineLayout layout;
    VkPipeline pipeline;
    VkDescriptorSet set;
} cgrt_vk_step;

struct cgrt_vulkan_state {
    cgrt_vk_context *context;
    pthread_mutex_t lock; /* one run at a time: the device buffers are the executable's */
    int step_count;
    cgrt_vk_step *steps;
    /* one device buffer: every tensor of the problem, then the workspace, 256-byte aligned */
    VkDeviceSize region_offset[CG_BUF_COUNT];
    VkDeviceSize region_bytes[CG_BUF_COUNT]; /* tensors: exact bytes; workspace: its size */
    VkDeviceSize tensor_end, total_bytes;
    VkBuffer buffer;
    VkDeviceMemory memory;
    void *mapped;     /* the device buffer when host-visible (no staging), else NULL */
    VkBuffer staging; /* tensors' mirror in host memory, when the device needs one */
    VkDeviceMemory staging_memory;
    void *staging_mapped;
    VkDescriptorPool pool;
    VkCommandPool command_pool;
    VkCommandBuffer command;
    VkFence fence;
    VkQueryPool queries; /* 2 timestamps, or VK_NULL_HANDLE */
    int poison;          /* CONVGRAD_VK_POISON: outputs and workspace filled with NaN first */
    int grid_cap;        /* CONVGRAD_VK_GRID_CAP: largest dispatch dimension (0: the device's) */
    double last_ms;
};

/* Reads the variant's steps into state->steps (cgrt_vk_steps.c); CG_ERR_PACK when malformed. */
cg_status cgrt_vk_read_steps(cgrt_executable *exe, const cJSON *variant, char msg[CG_MSG_MAX]);

/* Checks every step's requirements against the device: shared memory, workgroup size and count,
 * push constants, buffer ranges and alignment, features. CG_ERR_LIMIT or CG_ERR_UNSUPPORTED
 * with a message naming the kernel and the limit. */
cg_status cgrt_vk_check_limits(const cgrt_executable *exe, char msg[CG_MSG_MAX]);

#endif /* CGRT_VK_EXEC_H */
