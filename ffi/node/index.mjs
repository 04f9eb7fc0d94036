// The ES module entry point: the same objects as the CommonJS one (index.js).
import replystream from './index.js';

export const {
  DeliveryError,
  Driver,
  Engine,
  FORMATS,
  InvalidArgumentError,
  InvalidConfigError,
  InvalidUtf8Error,
  ReplystreamError,
  ResultCode,
  Turn,
  TurnEndedError,
  UnknownChannelError,
  UnknownSendError,
  chunk,
  libraryPath,
  minLimit,
  render,
  resultMessage,
  split,
  version,
} = replystream;

export default replystream;
