// Preloaded (node --require) into `vsce package` by check-package.js: every
// network connection and name lookup throws, so packaging that needs the
// network fails the test instead of passing on a machine that has one.
'use strict';

const dns = require('dns');
const net = require('net');

function refuse(what) {
  return function () {
    throw new Error(`editors.vscode.package: ${what} attempted while packaging offline`);
  };
}

net.Socket.prototype.connect = refuse('a network connection');
dns.lookup = refuse('a DNS lookup');
dns.resolve = refuse('a DNS lookup');
if (dns.promises) {
  dns.promises.lookup = refuse('a DNS lookup');
  dns.promises.resolve = refuse('a DNS lookup');
}
