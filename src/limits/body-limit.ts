// Body caps for routes that hand the raw request to someone else's parser (the MCP transport), where
// readJson's own bound cannot apply: Hono's bodyLimit, refusing through our AppError (413 payload_too_large).
import { bodyLimit } from 'hono/body-limit';
import { AppError } from '../lib/errors';
import { MAX_BODY_BYTES } from '../lib/validate';

export const bodyCap = (maxBytes = MAX_BODY_BYTES) =>
  bodyLimit({
    maxSize: maxBytes,
    onError: () => {
      throw new AppError(413, 'payload_too_large', `The request body exceeds ${maxBytes} bytes.`);
    },
  });
