/*
 * linux_loader_test -- vpmu-run's Linux bzImage loader (examples/vpmu-run/
 * linux.c, with elf.c) and COM1's interrupt (devices.c), linked alone, on
 * bzImages built here in memory (bzimage.h: a setup header, a gzip payload
 * holding a small ELF64 kernel): what a good image puts in RAM, field by
 * field (boot_params, e820, command line, initrd, MP table), and each
 * refusal with its message.  Exit status 0, or 1 after naming each failed
 * check.
 */
#include <elf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/kvm.h>

#include "vpmu-run.h"
#include "loader_check.h"
#include "bzimage.h"

#define RAM_SIZE	(128u << 20)
#define KERNEL_PA	0x1000000u	/* where the test kernel's PT_LOAD goes */
#define KERNEL_LEN	0x3000u
#define BP		0x7000u		/* boot_params, as linux.c places them */

static char err[256];
const char *vr_progname = "linux_loader_test";	/* boot.c's messages */

/* A kernel ELF: one PT_LOAD of KERNEL_LEN bytes (i & 0xff) at KERNEL_PA. */
static uint8_t *
kernel_elf(size_t *len)
{
	size_t n = sizeof(Elf64_Ehdr) + sizeof(Elf64_Phdr) + KERNEL_LEN, i;
	uint8_t *f = calloc(1, n);
	Elf64_Ehdr eh = { 0 };
	Elf64_Phdr ph = { 0 };

	memcpy(eh.e_ident, ELFMAG, SELFMAG);
	eh.e_ident[EI_CLASS] = ELFCLASS64;
	eh.e_ident[EI_DATA] = ELFDATA2LSB;
	eh.e_ident[EI_VERSION] = EV_CURRENT;
	eh.e_type = ET_EXEC;
	eh.e_machine = EM_X86_64;
	eh.e_version = EV_CURRENT;
	eh.e_entry = KERNEL_PA + 0x40;
	eh.e_phoff = sizeof(eh);
	eh.e_ehsize = sizeof(eh);
	eh.e_phentsize = sizeof(ph);
	eh.e_phnum = 1;
	ph.p_type = PT_LOAD;
	ph.p_flags = PF_R | PF_X;
	ph.p_offset = sizeof(eh) + sizeof(ph);
	ph.p_vaddr = 0xffffffff81000000ull;
	ph.p_paddr = KERNEL_PA;
	ph.p_filesz = ph.p_memsz = KERNEL_LEN;
	ph.p_align = 0x1000;
	memcpy(f, &eh, sizeof(eh));
	memcpy(f + sizeof(eh), &ph, sizeof(ph));
	for (i = 0; i < KERNEL_LEN; i++)
		f[ph.p_offset + i] = (uint8_t)i;
	*len = n;
	return (f);
}

/* A bzImage of kernel_elf()'s kernel (bzimage.h), initrd_addr_max 0x7fffffff. */
static uint8_t *
bzimage(size_t *len)
{
	size_t klen;
	uint8_t *k = kernel_elf(&klen), *f = bz_image(k, klen, 0x7fffffff, len);

	free(k);
	return (f);
}

static int
load(const uint8_t *f, size_t len, const struct vr_linux_boot *b, struct vr_image *img)
{
	memset(img, 0, sizeof(*img));
	memset(ram, 0xAA, RAM_SIZE);
	err[0] = '\0';
	return (vr_linux_load(f, len, ram, RAM_SIZE, b, img, err, sizeof(err)));
}

static uint8_t
sum(uint64_t gpa, size_t n)
{
	uint8_t s = 0;

	while (n-- > 0)
		s = (uint8_t)(s + ram[gpa++]);
	return (s);
}

static void
test_good(void)
{
	static const uint8_t rd[5000] = { 1, 2, 3 };
	struct vr_linux_boot b = { .cmdline = "console=ttyS0 quiet", .initrd = rd,
	    .initrd_len = sizeof(rd) };
	struct vr_image img;
	size_t len, i, ok;
	uint8_t *f = bzimage(&len);
	uint64_t rdaddr = (RAM_SIZE - sizeof(rd)) & ~0xfffull;

	current = "good";
	CHECK(vr_linux_find(f, len) == 1);
	CHECK(load(f, len, &b, &img) == 0);
	if (err[0] != 0)
		fprintf(stderr, "linux_loader_test: good: %s\n", err);
	CHECK(img.entry == KERNEL_PA + 0x40);
	CHECK(img.linux_bp == BP);
	for (i = 0, ok = 1; i < KERNEL_LEN; i++)
		ok &= ram[KERNEL_PA + i] == (uint8_t)i;
	CHECK(ok);
	/* boot_params: the image's header, then the loader's fields */
	CHECK(memcmp(ram + BP + 0x202, "HdrS", 4) == 0);
	CHECK(ram[BP + 0x1f1] == BZ_SETUP_SECTS && r32(BP + 0x248) == 0x10);
	CHECK(ram[BP + 0x210] == 0xff);				/* type_of_loader */
	CHECK(ram[BP + 0x211] == 0x81);				/* LOADED_HIGH | CAN_USE_HEAP */
	CHECK(r32(BP + 0x228) == 0x20000);			/* cmd_line_ptr */
	CHECK(strcmp((char *)ram + 0x20000, "console=ttyS0 quiet") == 0);
	CHECK(r32(BP + 0x218) == rdaddr && r32(BP + 0x21c) == sizeof(rd));
	CHECK(r32(BP + 0x0c0) == 0 && r32(BP + 0x0c4) == 0);	/* ext_ramdisk_* */
	CHECK(memcmp(ram + rdaddr, rd, sizeof(rd)) == 0);
	CHECK(ram[BP + 0x1e8] == 4);				/* e820_entries */
	CHECK(r64(BP + 0x2d0) == 0 && r64(BP + 0x2d8) == 0x9fc00 && r32(BP + 0x2e0) == 1);
	CHECK(r64(BP + 0x2e4) == 0x9fc00 && r64(BP + 0x2ec) == 0x400 && r32(BP + 0x2f4) == 2);
	CHECK(r64(BP + 0x2f8) == 0xf0000 && r64(BP + 0x300) == 0x10000 && r32(BP + 0x308) == 2);
	CHECK(r64(BP + 0x30c) == 0x100000 && r64(BP + 0x314) == RAM_SIZE - 0x100000 &&
	    r32(BP + 0x31c) == 1);
	CHECK(ram[BP + 0x26c] == 0);				/* past the header: zeroed */
	free(f);
}

static void
test_mptable(void)
{
	size_t n;
	uint16_t len, count;

	current = "mptable";
	memset(ram, 0, 0x100000);
	n = vr_linux_mptable(ram, 2, 0x6fb, 0x178bfbff);
	CHECK(memcmp(ram + 0xf0000, "_MP_", 4) == 0);
	CHECK(r32(0xf0004) == 0xf0010 && ram[0xf0008] == 1 && ram[0xf0009] == 4);
	CHECK(sum(0xf0000, 16) == 0);
	CHECK(memcmp(ram + 0xf0010, "PCMP", 4) == 0);
	memcpy(&len, ram + 0xf0014, 2);
	memcpy(&count, ram + 0xf0010 + 34, 2);
	/* 2 processors (20 bytes), bus, I/O APIC, 16 I/O and 2 local interrupts (8) */
	CHECK(count == 2 + 1 + 1 + 16 + 2);
	CHECK(len == 44 + 2 * 20 + 20 * 8);
	CHECK(n == 16 + (size_t)len);
	CHECK(sum(0xf0010, len) == 0);
	CHECK(r32(0xf0010 + 36) == 0xfee00000);
	/* processor 0: APIC ID 0, enabled and BSP; processor 1 enabled only */
	CHECK(ram[0xf003c] == 0 && ram[0xf003d] == 0 && ram[0xf003f] == 3);
	CHECK(ram[0xf0050] == 0 && ram[0xf0051] == 1 && ram[0xf0053] == 1);
	CHECK(r32(0xf0054) == 0x6fb);
	/* the I/O APIC: ID 2 at 0xfec00000; IRQ 4 to its pin 4 */
	CHECK(ram[0xf006c] == 2 && ram[0xf006d] == 2 && r32(0xf0070) == 0xfec00000);
	CHECK(ram[0xf0074 + 4 * 8] == 3 && ram[0xf0074 + 4 * 8 + 5] == 4 &&
	    ram[0xf0074 + 4 * 8 + 6] == 2 && ram[0xf0074 + 4 * 8 + 7] == 4);
}

/*
 * The command line: --append, then the features to turn off (clearcpuid=,
 * exactly), unless --append has a clearcpuid= of its own.
 */
static void
test_cmdline(void)
{
	char *s;

	current = "cmdline";
	s = vr_linux_cmdline("");
	CHECK(s != NULL && strcmp(s, VR_LINUX_CLEARCPUID) == 0);
	free(s);
	s = vr_linux_cmdline("console=ttyS0 quiet");
	CHECK(s != NULL && strncmp(s, "console=ttyS0 quiet clearcpuid=", 31) == 0 &&
	    strcmp(s + 20, VR_LINUX_CLEARCPUID) == 0);
	free(s);
	s = vr_linux_cmdline("quiet clearcpuid=avx");
	CHECK(s != NULL && strcmp(s, "quiet clearcpuid=avx") == 0);
	free(s);
	/* the names of what boot.c hides: SSSE3, XSAVE and CMPXCHG16B among them */
	CHECK(strstr(VR_LINUX_CLEARCPUID, ",ssse3,") != NULL &&
	    strstr(VR_LINUX_CLEARCPUID, ",xsave,") != NULL &&
	    strstr(VR_LINUX_CLEARCPUID, ",cx16,") != NULL);
}

/*
 * The CPUID a Linux guest gets (boot.c): what the kernel must not use at
 * CPL 0 is hidden; the rest is left; a guest that is not a bzImage keeps
 * every bit.
 */
static void
test_cpuid(void)
{
	struct vr_vm vm;
	struct vr_vcpu c;
	struct kvm_cpuid2 *t;
	struct kvm_cpuid_entry2 *e;
	int bz;

	current = "cpuid";
	t = calloc(1, sizeof(*t) + 2 * sizeof(*e));
	CHECK(t != NULL);
	if (t == NULL)
		return;
	e = t->entries;
	for (bz = 0; bz <= 1; bz++) {
		memset(&vm, 0, sizeof(vm));
		memset(&c, 0, sizeof(c));
		memset(e, 0, 2 * sizeof(*e));
		vm.nvcpus = 1;
		vm.irqchip_kernel = true;
		vm.bzimage = bz;
		t->nent = 2;
		e[0].function = 1;
		e[0].ecx = e[0].edx = 0xffffffffu;
		e[1].function = 7;
		e[1].ebx = e[1].ecx = e[1].edx = 0xffffffffu;
		vr_boot_cpuid(&vm, &c, t);
		/* CMPXCHG16B (1.ECX 13), XSAVE (1.ECX 26); FSGSBASE (7.EBX 0), RDSEED (7.EBX 18) */
		CHECK(!!(e[0].ecx & (1u << 13)) == !bz && !!(e[0].ecx & (1u << 26)) == !bz);
		CHECK(!!(e[1].ebx & 1) == !bz && !!(e[1].ebx & (1u << 18)) == !bz);
		/* left: SSE3 (1.ECX 0), x2APIC (1.ECX 21), BMI1 (7.EBX 3), SMEP (7.EBX 7) */
		CHECK((e[0].ecx & 1) && (e[0].ecx & (1u << 21)));
		CHECK((e[1].ebx & (1u << 3)) && (e[1].ebx & (1u << 7)));
	}
	free(t);
}

/* Each refusal, and its message. */
static void
test_refusals(void)
{
	struct vr_linux_boot b = { .cmdline = "" };
	struct vr_image img;
	size_t len;
	uint8_t *f = bzimage(&len), *g = malloc(len);
	char *longcmd = malloc(4096);

	current = "refusals";
	memcpy(g, f, len);
	vr_put16(g + 0x206, 0x0209);
	CHECK(load(g, len, &b, &img) < 0 && strstr(err, "boot protocol 2.09") != NULL);
	memcpy(g, f, len);
	g[0x211] = 0;
	CHECK(load(g, len, &b, &img) < 0 && strstr(err, "zImage") != NULL);
	memcpy(g, f, len);
	vr_put32(g + 0x24c, (uint32_t)len);
	CHECK(load(g, len, &b, &img) < 0 && strstr(err, "is not inside") != NULL);
	memcpy(g, f, len);
	g[BZ_PAYLOAD_OFF] = 0x42;
	CHECK(load(g, len, &b, &img) < 0 && strstr(err, "format is not known") != NULL);
	memcpy(g, f, len);
	memcpy(g + BZ_PAYLOAD_OFF, "\x5d\x00\x00", 3);
	CHECK(load(g, len, &b, &img) < 0 && strstr(err, "lzma-compressed") != NULL);
	memcpy(g, f, len);
	g[BZ_PAYLOAD_OFF + 40] ^= 0xff;		/* corrupt deflate data */
	CHECK(load(g, len, &b, &img) < 0 && strstr(err, "gzip:") != NULL);
	memcpy(g, f, len);
	vr_put32(g + len - 4, 0x7fffffff);				/* the size appended */
	CHECK(load(g, len, &b, &img) < 0 && strstr(err, "not plausible") != NULL);
	memset(longcmd, 'x', 4095);
	longcmd[4095] = '\0';
	b.cmdline = longcmd;
	CHECK(load(f, len, &b, &img) < 0 && strstr(err, "the kernel takes 2047") != NULL);
	b.cmdline = "";
	b.initrd = ram;			/* any bytes: too many of them */
	b.initrd_len = RAM_SIZE - 0x1000000;
	CHECK(load(f, len, &b, &img) < 0 && strstr(err, "does not fit") != NULL);
	b.initrd = NULL;
	b.initrd_len = 0;
	memset(&img, 0, sizeof(img));
	CHECK(vr_linux_load(f, len, ram, 32u << 20, &b, &img, err, sizeof(err)) < 0 &&
	    strstr(err, "64 MiB to 3 GiB") != NULL);
	CHECK(vr_linux_find(f, 0x200) == 0);
	memcpy(g, f, len);
	memcpy(g + 0x202, "HdrT", 4);
	CHECK(vr_linux_find(g, len) == 0);
	CHECK(load(g, len, &b, &img) < 0 && strstr(err, "not a Linux bzImage") != NULL);
	free(longcmd);
	free(g);
	free(f);
}

/* COM1's transmitter interrupt and loopback (devices.c). */
static void
test_uart_irq(void)
{
	struct vr_uart u = { 0 };

	current = "uart irq";
	CHECK(!vr_uart_irq(&u) && vr_uart_read(&u, 2) == 0x01);
	CHECK(!vr_uart_write(&u, 1, 0x02));		/* IER: THRE */
	CHECK(!vr_uart_irq(&u));			/* OUT2 clear: no line */
	CHECK(!vr_uart_write(&u, 4, 0x08));		/* MCR: OUT2 */
	CHECK(vr_uart_irq(&u));
	CHECK(vr_uart_read(&u, 2) == 0x02);		/* IIR: THRE, acknowledged */
	CHECK(!vr_uart_irq(&u) && vr_uart_read(&u, 2) == 0x01);
	CHECK(vr_uart_write(&u, 0, 'x'));		/* a byte: empty again at once */
	CHECK(vr_uart_irq(&u));
	CHECK(!vr_uart_write(&u, 2, 0x01));		/* FIFOs on */
	CHECK(vr_uart_read(&u, 2) == 0xC2 && vr_uart_read(&u, 2) == 0xC1);
	CHECK(!vr_uart_write(&u, 1, 0x00));
	CHECK(vr_uart_write(&u, 0, 'y'));
	CHECK(!vr_uart_irq(&u));			/* IER clear */
	CHECK(!vr_uart_write(&u, 1, 0x02) && vr_uart_irq(&u));	/* set: pending */
	/* loopback: MCR RTS | OUT2 | LOOP gives MSR CTS | DCD; THR not sent */
	CHECK(!vr_uart_write(&u, 4, 0x1a));
	CHECK(vr_uart_read(&u, 6) == 0x90);
	CHECK(!vr_uart_write(&u, 4, 0x1f) && vr_uart_read(&u, 6) == 0xF0);
	CHECK(!vr_uart_write(&u, 0, 'z'));
	CHECK(!vr_uart_write(&u, 4, 0x00) && vr_uart_read(&u, 6) == 0xB0);
}

int
main(void)
{
	if ((ram = malloc(RAM_SIZE)) == NULL)
		return (1);
	test_good();
	test_mptable();
	test_refusals();
	test_cmdline();
	test_cpuid();
	test_uart_irq();
	free(ram);
	if (failures != 0)
		return (1);
	printf("linux_loader_test: ok\n");
	return (0);
}
