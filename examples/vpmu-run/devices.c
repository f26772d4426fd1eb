/*
 * devices.c -- the register logic of vpmu-run's two small devices, with no
 * KVM and no locking (run.c's port table calls these under vm->lock):
 *
 *   COM1 at 0x3f8..0x3ff, a 16550 with nothing to receive and no
 *   interrupts: THR bytes (DLAB 0) are the console; DLL and DLM (DLAB 1),
 *   IER, FCR, LCR, MCR and SCR read back what was written (IIR shows FCR
 *   bit 0 as 0xC1); LSR reads 0x60 (THRE and TEMT: always ready to send,
 *   no data ready); MSR reads 0xB0 (DCD, DSR and CTS: a line that is
 *   there and always clear to send; no change bits); RBR reads 0.
 *
 *   fw_cfg at 0x510 (a 16-bit key selects an item and resets the offset)
 *   and 0x511 (the item's bytes in order, 0 past its end): the signature,
 *   the interface ID (1: no DMA), the RAM size, the CPU count and maximum,
 *   and an empty file directory; any other key is an empty item.
 */
#include <string.h>

#include "vpmu-run.h"

/* Register offsets from 0x3f8. */
#define R_DATA		0	/* THR / RBR; DLL with DLAB */
#define R_IER		1	/* DLM with DLAB */
#define R_IIR		2	/* read: IIR; write: FCR */
#define R_LCR		3
#define R_MCR		4
#define R_LSR		5
#define R_MSR		6
#define R_SCR		7
#define LCR_DLAB	0x80
#define FCR_ENABLE	0x01
#define IIR_NONE	0x01	/* no interrupt pending */
#define IIR_FIFO	0xC0	/* FIFOs enabled */
#define LSR_IDLE	0x60	/* THRE | TEMT */
#define MSR_LINE	0xB0	/* DCD | DSR | CTS */

/* fw_cfg keys */
#define FW_SIGNATURE	0x0000
#define FW_ID		0x0001
#define FW_RAM_SIZE	0x0003
#define FW_NB_CPUS	0x0005
#define FW_MAX_CPUS	0x000f
#define FW_FILE_DIR	0x0019

bool
vr_uart_write(struct vr_uart *u, unsigned reg, uint8_t v)
{
	bool dlab = (u->lcr & LCR_DLAB) != 0;

	switch (reg) {
	case R_DATA:
		if (!dlab)
			return (true);
		u->dll = v;
		break;
	case R_IER:
		if (dlab)
			u->dlm = v;
		else
			u->ier = v;
		break;
	case R_IIR:
		u->fcr = v;
		break;
	case R_LCR:
		u->lcr = v;
		break;
	case R_MCR:
		u->mcr = v;
		break;
	case R_SCR:
		u->scr = v;
		break;
	default:		/* LSR, MSR: read-only, a write is ignored */
		break;
	}
	return (false);
}

uint8_t
vr_uart_read(const struct vr_uart *u, unsigned reg)
{
	bool dlab = (u->lcr & LCR_DLAB) != 0;

	switch (reg) {
	case R_DATA:
		return (dlab ? u->dll : 0);
	case R_IER:
		return (dlab ? u->dlm : u->ier);
	case R_IIR:
		return ((uint8_t)(IIR_NONE | ((u->fcr & FCR_ENABLE) ? IIR_FIFO : 0)));
	case R_LCR:
		return (u->lcr);
	case R_MCR:
		return (u->mcr);
	case R_LSR:
		return (LSR_IDLE);
	case R_MSR:
		return (MSR_LINE);
	default:
		return (u->scr);
	}
}

void
vr_fwcfg_select(struct vr_fwcfg *f, uint16_t key)
{
	f->key = key;
	f->off = 0;
}

/* Item key's bytes into buf (8 bytes at most); their count. */
static unsigned
item(uint16_t key, uint64_t ram_size, unsigned ncpus, uint8_t *buf)
{
	uint32_t u32;
	uint16_t u16 = (uint16_t)ncpus;

	switch (key) {
	case FW_SIGNATURE:
		memcpy(buf, "QEMU", 4);
		return (4);
	case FW_ID:
		u32 = 1;			/* little endian, as the host */
		memcpy(buf, &u32, 4);
		return (4);
	case FW_RAM_SIZE:
		memcpy(buf, &ram_size, 8);
		return (8);
	case FW_NB_CPUS:
	case FW_MAX_CPUS:
		memcpy(buf, &u16, 2);
		return (2);
	case FW_FILE_DIR:
		memset(buf, 0, 4);		/* count 0, big endian */
		return (4);
	default:
		return (0);
	}
}

uint8_t
vr_fwcfg_read(struct vr_fwcfg *f, uint64_t ram_size, unsigned ncpus)
{
	uint8_t buf[8];
	unsigned n = item(f->key, ram_size, ncpus, buf);
	uint8_t v = f->off < n ? buf[f->off] : 0;

	if (f->off < UINT32_MAX)
		f->off++;
	return (v);
}
