package check

import (
	"syscall"
	"unsafe"
)

// offHeap returns n zero values of T in memory mapped from the kernel,
// not from Go's heap, and the function that unmaps it. The garbage
// collector neither scans this memory nor counts it towards its heap
// goal, and a page becomes resident only once written: a replay table
// reserved for its full bound costs what its claims fill. T must hold no
// pointer (the collector would not see what it points to). Where the
// kernel refuses the mapping, the values come from the heap.
func offHeap[T any](n int) ([]T, func()) {
	var zero T
	size := n * int(unsafe.Sizeof(zero))
	if size == 0 {
		return nil, func() {}
	}
	b, err := syscall.Mmap(-1, 0, size, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	if err != nil {
		return make([]T, n), func() {}
	}
	return unsafe.Slice((*T)(unsafe.Pointer(&b[0])), n), func() { syscall.Munmap(b) }
}
