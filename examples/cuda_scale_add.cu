// y = a * x + y over n floats: the kernel examples/cuda_load_files.py builds as PTX, CUBIN and FATBIN.
extern "C" __global__ void scale_add(float a, const float* x, float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i] + y[i];
}
