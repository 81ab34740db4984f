# The GPU backend (runtime/cuda, its kernels in runtime/cuda/kernels),
# included from runtime/CMakeLists.txt.
#
# The kernels of runtime/cuda/kernels are compiled by nvcc into ONE fatbin (SASS
# for sm_80 and sm_90, PTX for compute_90 so that newer GPUs JIT it),
# embedded in the library with .incbin (KernelImage.S), and loaded at run
# time through the driver API (cuModuleLoadData). Nothing links cudart or
# libcuda: without the toolkit (or with -DACCEL_ENABLE_CUDA=OFF) the library
# still builds, with an empty image, and GpuExecutor::create says why it
# cannot run.
set(ACCEL_GPU_KERNEL_SOURCES
  ${CMAKE_CURRENT_SOURCE_DIR}/cuda/kernels/Kernels.cu
  ${CMAKE_CURRENT_SOURCE_DIR}/cuda/kernels/Common.cuh
  ${CMAKE_CURRENT_SOURCE_DIR}/cuda/kernels/AllReduce.cu
  ${CMAKE_CURRENT_SOURCE_DIR}/cuda/kernels/P2pAllReduce.h
  ${CMAKE_CURRENT_SOURCE_DIR}/cuda/kernels/Attention.cu
  ${CMAKE_CURRENT_SOURCE_DIR}/cuda/kernels/DecodeAttention.cu
  ${CMAKE_CURRENT_SOURCE_DIR}/cuda/kernels/DecodeAttentionKP.cu
  ${CMAKE_CURRENT_SOURCE_DIR}/cuda/kernels/Dequantize.cu
  ${CMAKE_CURRENT_SOURCE_DIR}/cuda/kernels/Elementwise.cu
  ${CMAKE_CURRENT_SOURCE_DIR}/cuda/kernels/Embedding.cu
  ${CMAKE_CURRENT_SOURCE_DIR}/cuda/kernels/FlashPrefill.cu
  ${CMAKE_CURRENT_SOURCE_DIR}/cuda/kernels/Gemv.cu
  ${CMAKE_CURRENT_SOURCE_DIR}/cuda/kernels/GemvShape.h
  ${CMAKE_CURRENT_SOURCE_DIR}/cuda/kernels/GemvInt4.cu
  ${CMAKE_CURRENT_SOURCE_DIR}/cuda/kernels/Int4Layout.h
  ${CMAKE_CURRENT_SOURCE_DIR}/cuda/kernels/Mma.cuh
  ${CMAKE_CURRENT_SOURCE_DIR}/cuda/kernels/KVCache.cu
  ${CMAKE_CURRENT_SOURCE_DIR}/cuda/kernels/Moe.cu
  ${CMAKE_CURRENT_SOURCE_DIR}/cuda/kernels/MoeShape.h
  ${CMAKE_CURRENT_SOURCE_DIR}/cuda/kernels/Norm.cu
  ${CMAKE_CURRENT_SOURCE_DIR}/cuda/kernels/QuantizeActivations.cu
  ${CMAKE_CURRENT_SOURCE_DIR}/cuda/kernels/Rotary.cu
  ${CMAKE_CURRENT_SOURCE_DIR}/cuda/kernels/Sampling.cu
)
set(ACCEL_GPU_KERNEL_DIR ${ACCEL_BINARY_DIR}/runtime/cuda/kernels)
file(MAKE_DIRECTORY ${ACCEL_GPU_KERNEL_DIR})
if(ACCEL_ENABLE_CUDA AND CUDAToolkit_FOUND AND CUDAToolkit_NVCC_EXECUTABLE)
  set(ACCEL_GPU_FATBIN ${ACCEL_GPU_KERNEL_DIR}/accel_kernels.fatbin)
  add_custom_command(
    OUTPUT ${ACCEL_GPU_FATBIN}
    COMMAND ${CUDAToolkit_NVCC_EXECUTABLE} -std=c++17 -O3 -I${ACCEL_SOURCE_DIR} -fatbin
            -gencode arch=compute_80,code=sm_80
            -gencode arch=compute_90,code=sm_90
            -gencode arch=compute_90,code=compute_90
            -o ${ACCEL_GPU_FATBIN} ${CMAKE_CURRENT_SOURCE_DIR}/cuda/kernels/Kernels.cu
    DEPENDS ${ACCEL_GPU_KERNEL_SOURCES}
    COMMENT "nvcc runtime/cuda/kernels -> accel_kernels.fatbin (sm_80, sm_90, compute_90)")
  enable_language(ASM)
  set(ACCEL_GPU_KERNEL_IMAGE ${ACCEL_GPU_KERNEL_DIR}/KernelImage.S)
  configure_file(${CMAKE_CURRENT_SOURCE_DIR}/cuda/kernels/KernelImage.S.in ${ACCEL_GPU_KERNEL_IMAGE}
               @ONLY)
  set_source_files_properties(${ACCEL_GPU_KERNEL_IMAGE} PROPERTIES OBJECT_DEPENDS ${ACCEL_GPU_FATBIN})
  message(STATUS "accel: GPU kernels built with ${CUDAToolkit_NVCC_EXECUTABLE}")
else()
  set(ACCEL_GPU_KERNEL_IMAGE ${CMAKE_CURRENT_SOURCE_DIR}/cuda/kernels/NoKernelImage.cpp)
  message(STATUS "accel: GPU kernels not built (no CUDA toolkit); the GPU backend will say so")
endif()

add_library(accel_gpu STATIC
  cuda/GpuContext.cpp
  cuda/DevicePool.cpp
  cuda/CublasLt.cpp
  cuda/P2pAllReduce.cpp
  cuda/GpuExecutor.cpp
  cuda/GpuKvCache.cpp
  cuda/GpuStages.cpp
  cuda/GpuProcessRank.cpp
  cuda/TpGpuExecutor.cpp
  cuda/GpuPlanKernels.cpp
  cuda/GpuGraphs.cpp
  cuda/GpuPipeline.cpp
  cuda/GpuSteps.cpp
  cuda/Int4Pack.cpp
  cuda/W4Prefetch.cpp
  cuda/ops/Attention.cpp
  cuda/ops/Collectives.cpp
  cuda/ops/Embedding.cpp
  cuda/ops/Linear.cpp
  cuda/ops/Moe.cpp
  cuda/ops/Norms.cpp
  cuda/ops/Onnx.cpp
  cuda/ops/Pointwise.cpp
  cuda/ops/Sampling.cpp
  cuda/ops/Transfers.cpp
  cuda/ops/Views.cpp
  cuda/GpuRotary.cpp
  cuda/GpuFlashPrefill.cpp
  ${ACCEL_GPU_KERNEL_IMAGE}
)
target_link_libraries(accel_gpu PUBLIC accel_engine)
