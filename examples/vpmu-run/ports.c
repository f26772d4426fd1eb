/*
 * ports.c -- vpmu-run's port table, for KVM_EXIT_IO (run.c's vcpu_run()):
 * COM1 (the guest's console, per-vCPU lines), fw_cfg, the exit port 0xf4,
 * the snapshot port 0xf5 and the marks port 0xf6; a Linux guest's probes
 * of ports nobody decodes.  The devices' register logic is devices.c's and
 * marks.c's; here each access is taken under vm->lock and its effect on
 * the run (the console, IRQ 4, the end of the run) is made.
 *
 * An access to a port in a range here calls the range's handler once per
 * item (count > 1 for a REP INS or OUTS) with the port, the direction and
 * the item's size bytes, which an IN's handler fills.  A handler returns
 * false for an access it does not take; that, and any port not listed,
 * ends the run.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <linux/kvm.h>

#include "vpmu-run.h"

/* Write out what the vCPU's console line holds. */
void
vr_console_flush(struct vr_vcpu *c)
{
	FILE *f = c->vm->console != NULL ? c->vm->console : stdout;

	if (c->conslen == 0)
		return;
	flockfile(f);
	fwrite_unlocked(c->cons, 1, c->conslen, f);
	if (c->cons[c->conslen - 1] == '\n')
		fflush_unlocked(f);
	funlockfile(f);
	c->conslen = 0;
}

/*
 * 0x3f8..0x3ff, COM1 (devices.c): a THR byte is the guest's console, to
 * stdout (vm->console, when an output took standard output).  Bytes are kept per vCPU until a newline (or 256 of them, or the
 * end of the run), so lines of different vCPUs do not mix however KVM
 * splits a REP OUTSB.  Of a wider access, only the low byte is the
 * register's (an IN's other bytes read 0).  With the in-kernel irqchip,
 * the UART's interrupt line drives IRQ 4 (KVM_IRQ_LINE at each change).
 */
static bool
com1_io(struct vr_vcpu *c, uint16_t port, bool out, uint8_t *data, unsigned size)
{
	struct vr_vm *vm = c->vm;
	struct kvm_irq_level irq = { .irq = VR_UART_IRQ };
	bool thr;

	pthread_mutex_lock(&vm->lock);
	if (out) {
		thr = vr_uart_write(&vm->uart, port - VR_PORT_COM1, data[0]);
	} else {
		memset(data, 0, size);
		data[0] = vr_uart_read(&vm->uart, port - VR_PORT_COM1);
		thr = false;
	}
	irq.level = vr_uart_irq(&vm->uart);
	if (vm->irqchip_kernel && irq.level != vm->uart_irq) {
		vm->uart_irq = irq.level;
		if (ioctl(vm->vm_fd, KVM_IRQ_LINE, &irq) < 0)
			fprintf(stderr, "%s: KVM_IRQ_LINE %u: %s\n", vr_progname,
			    VR_UART_IRQ, strerror(errno));
	}
	pthread_mutex_unlock(&vm->lock);
	if (thr) {
		c->cons[c->conslen++] = (char)data[0];
		if (c->cons[c->conslen - 1] == '\n' || c->conslen == sizeof(c->cons))
			vr_console_flush(c);
	}
	return (true);
}

/*
 * 0x510 and 0x511, fw_cfg (devices.c): a 16-bit write to 0x510 selects,
 * each byte read from 0x511 is the item's next.
 */
static bool
fwcfg_io(struct vr_vcpu *c, uint16_t port, bool out, uint8_t *data, unsigned size)
{
	struct vr_vm *vm = c->vm;
	uint16_t key;
	unsigned i;

	if (port == VR_PORT_FWCFG_SEL) {
		if (!out || size != 2)
			return (false);
		memcpy(&key, data, sizeof(key));
		pthread_mutex_lock(&vm->lock);
		vr_fwcfg_select(&vm->fwcfg, key);
		pthread_mutex_unlock(&vm->lock);
		return (true);
	}
	if (out)
		return (false);
	pthread_mutex_lock(&vm->lock);
	for (i = 0; i < size; i++)
		data[i] = vr_fwcfg_read(&vm->fwcfg, vm->ram_size, vm->nvcpus);
	pthread_mutex_unlock(&vm->lock);
	return (true);
}

/*
 * 0xf4, as QEMU's isa-debug-exit: a write of V ends the run with status
 * V & 0xff, or (V << 1 | 1) & 0xff with --exit-status qemu.
 */
static bool
exit_io(struct vr_vcpu *c, uint16_t port, bool out, uint8_t *data, unsigned size)
{
	struct vr_vm *vm = c->vm;
	uint32_t v = 0;

	(void)port;
	if (!out)
		return (false);
	memcpy(&v, data, size < sizeof(v) ? size : sizeof(v));	/* little endian */
	pthread_mutex_lock(&vm->lock);
	if (!vm->stopping) {
		vm->exit_cpu = c->index;
		vm->exit_value = v;
		vr_run_stop_locked(vm, (int)((vm->exit_qemu ? v << 1 | 1 : v) & 0xff),
		    VR_END_GUEST_EXIT);
	}
	pthread_mutex_unlock(&vm->lock);
	return (true);
}

/*
 * 0xf5, with --snapshot: a 32-bit write asks for a snapshot.  The run stops
 * with status 0 (unless it already ends); main.c writes the file once every
 * vCPU thread has returned.  Without --snapshot: not handled.
 */
static bool
snapshot_io(struct vr_vcpu *c, uint16_t port, bool out, uint8_t *data, unsigned size)
{
	struct vr_vm *vm = c->vm;

	(void)port;
	(void)data;
	if (vm->snapshot_path == NULL || !out || size != 4)
		return (false);
	pthread_mutex_lock(&vm->lock);
	if (!vm->stopping) {
		vm->snapshot_cpu = c->index;
		vr_run_stop_locked(vm, 0, VR_END_SNAPSHOT);
	}
	pthread_mutex_unlock(&vm->lock);
	return (true);
}

/* 0xf6: a mark of every counter, any size of write (marks.c). */
static bool
mark_io(struct vr_vcpu *c, uint16_t port, bool out, uint8_t *data, unsigned size)
{
	uint32_t v = 0;

	(void)port;
	if (!out)
		return (false);
	memcpy(&v, data, size);
	vr_mark_take(c, v);
	return (true);
}

static const struct port {
	uint16_t    first, last;
	bool	  (*io)(struct vr_vcpu *c, uint16_t port, bool out, uint8_t *data,
		    unsigned size);
} ports[] = {
	{ VR_PORT_COM1, VR_PORT_COM1 + 7,			com1_io },
	{ VR_PORT_FWCFG_SEL, VR_PORT_FWCFG_DATA,		fwcfg_io },
	{ VR_PORT_EXIT, VR_PORT_EXIT,				exit_io },
	{ VR_PORT_SNAPSHOT, VR_PORT_SNAPSHOT,			snapshot_io },
	{ VR_PORT_MARK, VR_PORT_MARK,				mark_io },
};

/* KVM_EXIT_IO: true if a port handler took every item. */
bool
vr_port_io(struct vr_vcpu *c)
{
	const struct kvm_run *run = c->run;
	uint64_t bytes = (uint64_t)run->io.size * run->io.count;
	bool out = run->io.direction == KVM_EXIT_IO_OUT;
	uint8_t *data = (uint8_t *)c->run + run->io.data_offset;
	size_t i, k;

	if (run->io.size == 0 || run->io.size > 4 ||
	    run->io.data_offset > c->vm->run_size ||
	    bytes > c->vm->run_size - run->io.data_offset)
		return (false);
	for (i = 0; i < NELEM(ports); i++) {
		if (run->io.port < ports[i].first || run->io.port > ports[i].last)
			continue;
		for (k = 0; k < run->io.count; k++)
			if (!ports[i].io(c, run->io.port, out,
			    data + k * run->io.size, run->io.size))
				return (false);
		return (true);
	}
	/*
	 * A Linux guest probes for devices at ports nobody decodes: it reads
	 * all ones there, and writes go nowhere, as on a PC's ISA bus.
	 */
	if (c->vm->bzimage) {
		if (!out)
			memset(data, 0xff, bytes);
		return (true);
	}
	return (false);
}
