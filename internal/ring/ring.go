// Package ring is a FIFO backed by a growable circular buffer: the NICs'
// round-robin of connections with data to send. It allocates only when it
// grows, never per push or pop.
package ring

// Ring is a FIFO of T; the zero value is empty and ready.
type Ring[T any] struct {
	buf        []T
	head, size int
}

// Len is the number of elements queued.
func (r *Ring[T]) Len() int { return r.size }

func (r *Ring[T]) grow() {
	nb := make([]T, max(8, 2*len(r.buf)))
	for i := 0; i < r.size; i++ {
		nb[i] = r.buf[(r.head+i)%len(r.buf)]
	}
	r.buf, r.head = nb, 0
}

// Push appends v at the tail.
func (r *Ring[T]) Push(v T) {
	if r.size == len(r.buf) {
		r.grow()
	}
	r.buf[(r.head+r.size)%len(r.buf)] = v
	r.size++
}

// PushFront puts v at the head (next out), e.g. a queue pair continuing
// its burst.
func (r *Ring[T]) PushFront(v T) {
	if r.size == len(r.buf) {
		r.grow()
	}
	r.head = (r.head - 1 + len(r.buf)) % len(r.buf)
	r.buf[r.head] = v
	r.size++
}

// Peek is the head, left in place; the ring must not be empty.
func (r *Ring[T]) Peek() T { return r.buf[r.head] }

// Pop removes and returns the head; the ring must not be empty.
func (r *Ring[T]) Pop() T {
	v := r.buf[r.head]
	var zero T
	r.buf[r.head] = zero // no reference kept
	r.head = (r.head + 1) % len(r.buf)
	r.size--
	return v
}
