/*
 * The Docker multiplexed stream decoder (see rm/engine.h).
 */
#include <stdlib.h>
#include <string.h>

#include "rm/engine.h"
#include "rm/util.h"

void rm_frame_init(rm_frame_decoder *d, int raw)
{
	memset(d, 0, sizeof(*d));
	d->raw = raw;
}

int rm_frame_feed(rm_frame_decoder *d, const char *data, size_t len, rm_frame_cb cb, void *ud)
{
	if (d->broken)
		return -1;
	if (d->raw) {
		if (len)
			cb(ud, RM_STREAM_STDOUT, data, len);
		return 0;
	}
	while (len) {
		if (d->remaining) {
			size_t n = len < d->remaining ? len : d->remaining;
			cb(ud, d->stream, data, n);
			d->remaining -= (uint32_t)n;
			data += n;
			len -= n;
			continue;
		}
		size_t want = sizeof(d->hdr) - d->hdr_len;
		size_t n = len < want ? len : want;
		memcpy(d->hdr + d->hdr_len, data, n);
		d->hdr_len += n;
		data += n;
		len -= n;
		/* Only the type byte is checked, as Docker's own stdcopy does: the three padding
		 * bytes carry no meaning. It is checked as soon as it arrives: a wrong type
		 * means we are not looking at a multiplexed stream (a tty container, or
		 * garbage), so nothing after it can be trusted. */
		if (d->hdr[0] > RM_STREAM_SYSERR) {
			d->broken = 1;
			d->hdr_len = 0;
			return -1;
		}
		if (d->hdr_len < sizeof(d->hdr))
			break;
		d->hdr_len = 0;
		/* 0 is stdin, only seen with attach: shown as stdout. */
		d->stream = d->hdr[0] ? d->hdr[0] : RM_STREAM_STDOUT;
		d->remaining = (uint32_t)d->hdr[4] << 24 | (uint32_t)d->hdr[5] << 16 |
			       (uint32_t)d->hdr[6] << 8 | (uint32_t)d->hdr[7];
	}
	return 0;
}

int rm_frame_incomplete(const rm_frame_decoder *d)
{
	return !d->raw && !d->broken && (d->hdr_len != 0 || d->remaining != 0);
}
