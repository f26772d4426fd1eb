/*
 * devices.c -- the register logic of vpmu-run's two small devices, with no
 * KVM and no locking (ports.c's port table calls these under vm->lock):
 *
 *   COM1 at 0x3f8..0x3ff, a 16550 with nothing to receive: THR bytes
 *   (DLAB 0) are the console, sent at once; DLL and DLM (DLAB 1), IER,
 *   FCR, LCR, MCR and SCR read back what was written; LSR reads 0x60 (THRE
 *   and TEMT: always ready to send, no data ready); MSR reads 0xB0 (DCD,
 *   DSR and CTS: a line that is there and always clear to send; no change
 *   bits), or in loopback mode (MCR bit 4) the modem outputs looped back
 *   (RTS to CTS, DTR to DSR, OUT1 to RI, OUT2 to DCD), with THR bytes then
 *   not sent; RBR reads 0.  The one interrupt is the transmitter's: with
 *   IER bit 1 set it is pending once THR is empty (after each byte, and
 *   when the bit is set), IIR reads 0x02 for it (FIFO bits 0xC0 with FCR
 *   bit 0) and that read acknowledges it, else IIR reads 0x01; the line
 *   to IRQ 4 is the pending interrupt gated by MCR OUT2, as on a PC.
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
#define IIR_THRE	0x02	/* THR empty */
#define IER_THRE	0x02
#define MCR_OUT2	0x08
#define MCR_LOOP	0x10
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
		if (!dlab) {
			u->thre = true;		/* sent at once: empty again */
			return ((u->mcr & MCR_LOOP) == 0);
		}
		u->dll = v;
		break;
	case R_IER:
		if (dlab)
			u->dlm = v;
		else {
			if ((v & IER_THRE) && !(u->ier & IER_THRE))
				u->thre = true;
			u->ier = v & 0x0f;
		}
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

static bool
thre_pending(const struct vr_uart *u)
{
	return (u->thre && (u->ier & IER_THRE));
}

bool
vr_uart_irq(const struct vr_uart *u)
{
	return (thre_pending(u) && (u->mcr & MCR_OUT2));
}

uint8_t
vr_uart_read(struct vr_uart *u, unsigned reg)
{
	bool dlab = (u->lcr & LCR_DLAB) != 0;
	uint8_t fifo = (u->fcr & FCR_ENABLE) ? IIR_FIFO : 0, m = u->mcr;

	switch (reg) {
	case R_DATA:
		return (dlab ? u->dll : 0);
	case R_IER:
		return (dlab ? u->dlm : u->ier);
	case R_IIR:
		if (thre_pending(u)) {
			u->thre = false;	/* read: acknowledged */
			return ((uint8_t)(IIR_THRE | fifo));
		}
		return ((uint8_t)(IIR_NONE | fifo));
	case R_LCR:
		return (u->lcr);
	case R_MCR:
		return (u->mcr);
	case R_LSR:
		return (LSR_IDLE);
	case R_MSR:
		if (m & MCR_LOOP)
			return ((uint8_t)((m & 0x2) << 3 | (m & 0x1) << 5 | (m & 0x4) << 4 |
			    (m & 0x8) << 4));
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
