/*
 * alu_host.c -- a register-only integer instruction run on this
 * processor, from its own bytes, on the registers a guest's would have:
 * how the processor sets the status flags the SDM leaves undefined, which
 * may differ between encodings of one operation (ROL by an immediate and
 * ROL by CL do, for OF: alu.c does not take that one).  A guest's vCPU
 * runs on the host's processor, so what the guest's instruction would
 * leave is what this run leaves.  alu.c asks for them.
 *
 * The bytes run in a page of this thread's own, written through one
 * mapping of a memory file and run through another (no page is writable
 * and executable at once), from a trampoline that loads every general
 * register but RSP and the status flags, calls them, and stores the
 * results.  Only instructions that touch no memory and not RSP may run
 * here (the caller's rule: vpmu_insn.alu with no operand RSP).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "alu.h"

#if defined(__x86_64__) && defined(__linux__)
/* What the trampoline loads and stores: RAX .. R15 (RSP's slot unused), RFLAGS. */
struct host_state {
	uint64_t r[16];
	uint64_t rflags;
};

void	vpmu__alu_host_tramp(struct host_state *s, const void *code);
__asm__(".text\n"
    ".globl vpmu__alu_host_tramp\n"
    ".hidden vpmu__alu_host_tramp\n"
    ".type vpmu__alu_host_tramp, @function\n"
    "vpmu__alu_host_tramp:\n\t"
    "push %rbx\n\tpush %rbp\n\tpush %r12\n\tpush %r13\n\tpush %r14\n\tpush %r15\n\t"
    "push %rdi\n\t"			/* 8(%rsp) after the next: the state */
    "push %rsi\n\t"			/* (%rsp): the code */
    "pushq 128(%rdi)\n\tpopfq\n\t"
    "mov 0(%rdi), %rax\n\tmov 8(%rdi), %rcx\n\tmov 16(%rdi), %rdx\n\t"
    "mov 24(%rdi), %rbx\n\tmov 40(%rdi), %rbp\n\tmov 48(%rdi), %rsi\n\t"
    "mov 64(%rdi), %r8\n\tmov 72(%rdi), %r9\n\tmov 80(%rdi), %r10\n\t"
    "mov 88(%rdi), %r11\n\tmov 96(%rdi), %r12\n\tmov 104(%rdi), %r13\n\t"
    "mov 112(%rdi), %r14\n\tmov 120(%rdi), %r15\n\tmov 56(%rdi), %rdi\n\t"
    "call *(%rsp)\n\t"
    "pushfq\n\t"			/* (%rsp) flags, 8 code, 16 state */
    "push %rdi\n\t"			/* (%rsp) RDI, 8 flags, 16 code, 24 state */
    "mov 24(%rsp), %rdi\n\t"
    "mov %rax, 0(%rdi)\n\tmov %rcx, 8(%rdi)\n\tmov %rdx, 16(%rdi)\n\t"
    "mov %rbx, 24(%rdi)\n\tmov %rbp, 40(%rdi)\n\tmov %rsi, 48(%rdi)\n\t"
    "mov %r8, 64(%rdi)\n\tmov %r9, 72(%rdi)\n\tmov %r10, 80(%rdi)\n\t"
    "mov %r11, 88(%rdi)\n\tmov %r12, 96(%rdi)\n\tmov %r13, 104(%rdi)\n\t"
    "mov %r14, 112(%rdi)\n\tmov %r15, 120(%rdi)\n\t"
    "pop %rax\n\tmov %rax, 56(%rdi)\n\t"
    "pop %rax\n\tmov %rax, 128(%rdi)\n\t"
    "add $16, %rsp\n\t"
    "pop %r15\n\tpop %r14\n\tpop %r13\n\tpop %r12\n\tpop %rbp\n\tpop %rbx\n\t"
    "ret\n\t"
    ".size vpmu__alu_host_tramp, .-vpmu__alu_host_tramp\n");

#define PAGE	4096
/*
 * The page holds SLOTS instructions, each with its RET, found again by
 * their bytes: a loop's instructions are written once.  (A write to code
 * the processor ran lately costs it a pipeline flush.)
 */
#define SLOT	32
#define SLOTS	(PAGE / SLOT)

/* This thread's page: written at rw, run at rx; failed: none to be had. */
static __thread struct {
	uint8_t *rw;
	const void *rx;
	bool failed;
	uint8_t len[SLOTS];		/* the instruction in each slot, 0: none */
} page;
static pthread_key_t page_key;
static pthread_once_t page_once = PTHREAD_ONCE_INIT;
static bool page_key_ok;

static void
page_free(void *rw)
{
	(void)munmap(rw, PAGE);
	(void)munmap((void *)page.rx, PAGE);
}

static void
page_key_init(void)
{
	page_key_ok = pthread_key_create(&page_key, page_free) == 0;
}

static bool
page_get(void)
{
	void *rw, *rx;
	int fd;

	if (page.rw != NULL)
		return (true);
	if (page.failed)
		return (false);
	page.failed = true;
	(void)pthread_once(&page_once, page_key_init);
	if (!page_key_ok || (fd = memfd_create("vpmu-alu", MFD_CLOEXEC)) < 0)
		return (false);
	rw = rx = MAP_FAILED;
	if (ftruncate(fd, PAGE) == 0 &&
	    (rw = mmap(NULL, PAGE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0)) != MAP_FAILED)
		rx = mmap(NULL, PAGE, PROT_READ | PROT_EXEC, MAP_SHARED, fd, 0);
	(void)close(fd);
	if (rx == MAP_FAILED || pthread_setspecific(page_key, rw) != 0) {
		if (rw != MAP_FAILED)
			(void)munmap(rw, PAGE);
		if (rx != MAP_FAILED)
			(void)munmap(rx, PAGE);
		return (false);
	}
	page.rw = rw;
	page.rx = rx;
	page.failed = false;
	return (true);
}

bool
vpmu__alu_host_run(const uint8_t *code, unsigned len, uint64_t r[16], uint64_t *rflags)
{
	struct host_state s;

	uint32_t h = 2166136261u;	/* FNV-1a of the bytes: the slot */
	unsigned i;
	uint8_t *slot;

	if (len == 0 || len > VPMU_INSN_MAX || !page_get())
		return (false);
	for (i = 0; i < len; i++)
		h = (h ^ code[i]) * 16777619u;
	i = h % SLOTS;
	slot = page.rw + i * SLOT;
	if (page.len[i] != len || memcmp(slot, code, len) != 0) {
		memcpy(slot, code, len);
		slot[len] = 0xC3;	/* RET */
		page.len[i] = (uint8_t)len;
	}
	memcpy(s.r, r, sizeof(s.r));
	s.rflags = (*rflags & VPMU_ALU_STATUS) | 0x2;	/* bit 1 is always set */
	vpmu__alu_host_tramp(&s, (const uint8_t *)page.rx + i * SLOT);
	s.r[4] = r[4];			/* not loaded, not stored */
	memcpy(r, s.r, sizeof(s.r));
	*rflags = (*rflags & ~(uint64_t)VPMU_ALU_STATUS) | (s.rflags & VPMU_ALU_STATUS);
	return (true);
}
#else
bool
vpmu__alu_host_run(const uint8_t *code, unsigned len, uint64_t r[16], uint64_t *rflags)
{
	(void)code, (void)len, (void)r, (void)rflags;
	return (false);			/* not this processor's instructions */
}
#endif
