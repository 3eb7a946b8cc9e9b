"""Drives the SMPP gateway with Python's smpplib (an SMPP client not written by us) for
test/integration/smpp-smpplib.test.ts. Usage: python smpplib_client.py '<scenario JSON>'.

The scenario is {"host", "port", "steps": [...]}; each step is run in order on one connection
(until "disconnect") and its result is appended to a JSON list printed on stdout:

  {"op": "connect"}
  {"op": "bind", "mode": "transceiver|transmitter|receiver", "system_id", "password", "version"?}
  {"op": "submit", "source", "dest", "text", "coding": 0|3|8, "body": "short|payload|udh", "rd"?}
      -> {"statuses": [...], "message_ids": [...]} (one per PDU sent: several for "udh")
  {"op": "receive", "count", "timeout"}  -> {"deliveries": [{esm_class, data_coding, text, receipted_message_id, message_state, source_addr, destination_addr}]}
  {"op": "query", "message_id"}          -> {"status", "message_state"}
  {"op": "enquire_link"} / {"op": "unbind"} -> {"command", "status"}
  {"op": "raw", "hex"}                   -> the next PDU: {"command", "status", "sequence"}
  {"op": "disconnect"}
"""
import binascii
import json
import socket
import sys
import time
import warnings

warnings.simplefilter("ignore")

import smpplib.client  # noqa: E402
import smpplib.consts  # noqa: E402
import smpplib.exceptions  # noqa: E402
import smpplib.gsm  # noqa: E402
import smpplib.smpp  # noqa: E402

PART_SIZE = {0: 153, 3: 134, 8: 134}


def encode(text, coding):
    if coding == 0:
        return smpplib.gsm.gsm_encode(text)
    if coding == 3:
        return text.encode("iso8859_15")
    return text.encode("utf-16-be")


def as_text(value):
    if value is None:
        return None
    if isinstance(value, bytes):
        return value.decode("latin1")
    return str(value)


class Driver:
    def __init__(self, host, port):
        self.client = smpplib.client.Client(host, port, timeout=5, allow_unknown_opt_params=True)
        self.deliveries = []

    def read(self):
        pdu = self.client.read_pdu()
        if pdu.command == "deliver_sm":
            self.deliveries.append({
                "esm_class": pdu.esm_class,
                "data_coding": pdu.data_coding,
                "text": (pdu.short_message or b"").decode("utf-16-be" if pdu.data_coding == 8 else "latin1"),
                "receipted_message_id": as_text(getattr(pdu, "receipted_message_id", None)),
                "message_state": getattr(pdu, "message_state", None),
                "source_addr": as_text(pdu.source_addr),
                "destination_addr": as_text(pdu.destination_addr),
            })
            resp = smpplib.smpp.make_pdu("deliver_sm_resp", client=self.client)
            resp.sequence = pdu.sequence
            self.client.send_pdu(resp)
        elif pdu.command == "enquire_link":
            resp = smpplib.smpp.make_pdu("enquire_link_resp", client=self.client)
            resp.sequence = pdu.sequence
            self.client.send_pdu(resp)
        return pdu

    def until(self, wanted, timeout=15):
        """Reads PDUs until one whose command is in `wanted`; deliveries are answered meanwhile."""
        deadline = time.time() + timeout
        while time.time() < deadline:
            try:
                pdu = self.read()
            except socket.timeout:
                continue
            if pdu.command in wanted:
                return pdu
        raise RuntimeError("timed out waiting for %s" % (wanted,))

    def bind(self, step):
        mode = step["mode"]
        p = smpplib.smpp.make_pdu("bind_" + mode, client=self.client, system_id=step["system_id"], password=step["password"])
        p.interface_version = step.get("version", 0x34)  # smpplib's constructor always sets 0x34
        self.client.send_pdu(p)
        resp = self.until(("bind_" + mode + "_resp", "generic_nack"))
        if resp.status == 0:
            self.client.state = {"transmitter": smpplib.consts.SMPP_CLIENT_STATE_BOUND_TX, "receiver": smpplib.consts.SMPP_CLIENT_STATE_BOUND_RX, "transceiver": smpplib.consts.SMPP_CLIENT_STATE_BOUND_TRX}[mode]
        return {"status": resp.status, "sc_interface_version": getattr(resp, "sc_interface_version", None)}

    def submit(self, step):
        coding = step.get("coding", 0)
        encoded = encode(step["text"], coding)
        common = dict(source_addr_ton=5, source_addr_npi=0, source_addr=step["source"], dest_addr_ton=1, dest_addr_npi=1,
                      destination_addr=step["dest"], data_coding=coding, registered_delivery=step.get("rd", 0))
        body = step.get("body", "short")
        pdus = []
        if body == "udh":
            for part in smpplib.gsm.make_parts_encoded(encoded, PART_SIZE[coding]):
                pdus.append(self.client.send_message(esm_class=smpplib.consts.SMPP_GSMFEAT_UDHI, short_message=part, **common))
        elif body == "payload":
            pdus.append(self.client.send_message(esm_class=0, short_message=None, message_payload=encoded, **common))
        else:
            pdus.append(self.client.send_message(esm_class=0, short_message=encoded, **common))
        answers = {}
        while len(answers) < len(pdus):
            resp = self.until(("submit_sm_resp", "generic_nack"))
            answers[resp.sequence] = resp
        ordered = [answers[p.sequence] for p in pdus]
        return {"statuses": [r.status for r in ordered], "message_ids": [as_text(getattr(r, "message_id", None)) for r in ordered]}

    def receive(self, step):
        deadline = time.time() + step.get("timeout", 20)
        while len(self.deliveries) < step["count"] and time.time() < deadline:
            try:
                self.read()
            except socket.timeout:
                continue
        got, self.deliveries = self.deliveries[:step["count"]], self.deliveries[step["count"]:]
        return {"deliveries": got}

    def query(self, step):
        p = smpplib.smpp.make_pdu("query_sm", client=self.client, message_id=step["message_id"], source_addr_ton=5, source_addr_npi=0, source_addr=step.get("source", ""))
        self.client.send_pdu(p)
        resp = self.until(("query_sm_resp", "generic_nack"))
        return {"status": resp.status, "message_state": getattr(resp, "message_state", None)}

    def simple(self, command):
        p = smpplib.smpp.make_pdu(command, client=self.client)
        self.client.send_pdu(p)
        resp = self.until((command + "_resp", "generic_nack"))
        return {"command": resp.command, "status": resp.status}

    def raw(self, step):
        self.client._socket.sendall(binascii.unhexlify(step["hex"]))
        resp = self.until(("generic_nack", "submit_sm_resp", "cancel_sm_resp"))
        return {"command": resp.command, "status": resp.status, "sequence": resp.sequence}

    def closed_by_server(self, step):
        """True when the server closes the connection within the timeout."""
        deadline = time.time() + step.get("timeout", 10)
        while time.time() < deadline:
            try:
                self.read()
            except socket.timeout:
                continue
            except smpplib.exceptions.ConnectionError:
                return {"closed": True}
        return {"closed": False}


def main():
    scenario = json.loads(sys.argv[1])
    driver = Driver(scenario["host"], scenario["port"])
    results = []
    for step in scenario["steps"]:
        op = step["op"]
        try:
            if op == "connect":
                driver.client.connect()
                results.append({"ok": True})
            elif op == "bind":
                results.append(driver.bind(step))
            elif op == "submit":
                results.append(driver.submit(step))
            elif op == "receive":
                results.append(driver.receive(step))
            elif op == "query":
                results.append(driver.query(step))
            elif op in ("enquire_link", "unbind"):
                results.append(driver.simple(op))
            elif op == "raw":
                results.append(driver.raw(step))
            elif op == "closed_by_server":
                results.append(driver.closed_by_server(step))
            elif op == "sleep":
                time.sleep(step["seconds"])
                results.append({"ok": True})
            elif op == "disconnect":
                driver.client.disconnect()
                driver = Driver(scenario["host"], scenario["port"])
                results.append({"ok": True})
            else:
                raise ValueError("unknown op " + op)
        except Exception as e:  # reported to the test, which decides
            results.append({"error": "%s: %s" % (type(e).__name__, e)})
            break
    print(json.dumps(results))


if __name__ == "__main__":
    main()
