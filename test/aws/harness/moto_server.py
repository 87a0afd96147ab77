"""moto_server for the AWS tier, with changes that keep AWS's semantics at scale.

1. One request at a time. The stock server is threaded, and moto's DynamoDB TransactWriteItems is
   not atomic across threads: a transaction whose condition fails restores what it saved when it
   began, undoing the writes other requests made meanwhile (seen: two workers' job commits lost
   and counted again). Real DynamoDB serialises conflicting writes; serving requests one at a time
   gives the emulator the same guarantee, and the workers stay as concurrent as before.

2. TransactWriteItems saves the items it touches, not the whole table. moto deep-copies every
   table a transaction names before it starts, to restore on a cancellation: 3.9 ms on an empty
   table and 425 ms at 10,000 items, so a run's commits grow with the run. Here the copy of each
   table is skipped and the items the transaction names are saved instead and put back, in
   reverse order, when it fails; conditions, cancellation reasons and validation stay moto's own.
   With requests served one at a time nothing else writes while a transaction runs.

3. Fair queues (AWS, 2025): on a standard queue, messages carry a MessageGroupId naming their
   tenant, and when one tenant holds a disproportionate share of the consumers, SQS returns the
   other tenants' messages first (Amazon SQS Developer Guide, "How Amazon SQS fair queues work":
   a tenant is noisy above 10% of the messages in flight with at least 30 of its own, or above
   10% of the consumers' recent processing time; among noisy tenants, the one with the fewest in
   flight first). moto accepts the group id on a standard queue and ignores it; here a standard
   queue's receive order follows that rule, with the processing-time share taken as each tenant's
   share of the time its messages now in flight have been in processing (since their receive).

4. ReceiveMessage in time that does not grow with the batch times the queue. moto checks each
   message it returns against the queue's retention period by computing every attribute of the
   queue (its counts walk all messages), and reads the clock through datetime arithmetic for each
   message's visibility: a receive of 10 from a queue of 150 took 1 s. Here the retention period
   is read from the queue and the clock from time.time(), the same values.

5. Requests routed without reading the disk. moto finds each request's service by listing its own
   package directory (a stat per module) and matching the host against every service's URL
   patterns; the answer for a host never changes, so it is kept.

6. DynamoDB answers written without walking the service model per attribute value. moto 5.2
   serializes each response through botocore's output shape, and an AttributeValue (a structure of
   ten members) costs a lookup of every member under several aliases: a Scan of 10,000 items of
   nine attributes took 34 s on this machine, nearly all of it there. An AttributeValue is already
   in DynamoDB's wire form when it reaches the serializer (moto's dynamo_to_dict), so here it is
   written as it is, binary values base64-encoded as the generic path does; every other shape
   goes through moto's serializer.

7. Sends that do not count the queue. moto computes every attribute of a queue whenever it reads
   one, and each send reads one (ContentBasedDeduplication), so each send walked the whole queue
   three times for its message counts, reading the clock through datetime arithmetic per message:
   sending 10,000 messages to one queue took over 20 minutes, each send slower than the last. A
   send reads no count, so within SendMessage and SendMessageBatch the counts are left out of the
   attributes; elsewhere (GetQueueAttributes) they come from one walk with one clock reading, the
   same values.

Run as `python3 moto_server.py -H 127.0.0.1 -p PORT` (moto_server's own arguments).
"""

import base64
import copy
import json
import sys
import time
from collections import Counter

import moto.backends as moto_backends
import moto.core.serialize as moto_serialize
import moto.dynamodb.models as dynamodb_models
import moto.moto_server.werkzeug_app as werkzeug_app
import moto.server as moto_server
import moto.sqs.models as sqs_models
from moto.dynamodb.models.dynamo_type import DynamoType
from moto.dynamodb.models.table import Table

# 1. Serial.
_run_simple = moto_server.run_simple
moto_server.run_simple = lambda *args, **kwargs: _run_simple(*args, **{**kwargs, "threaded": False})


# 2. TransactWriteItems with an undo log of the items it names.
class _CopyExceptTables:
    """The `copy` module as dynamodb.models sees it: a Table is not deep-copied (kept as is)."""

    @staticmethod
    def deepcopy(value, memo=None):
        return value if isinstance(value, Table) else copy.deepcopy(value, memo)


dynamodb_models.copy = _CopyExceptTables()
_transact_write_items = dynamodb_models.DynamoDBBackend.transact_write_items


def _item_key(backend, op_type, op):
    """(table, hash, range) of the item one transaction entry names; None when malformed."""
    table = backend.tables.get(op.get("TableName"))
    if table is None:
        return None
    attrs = op.get("Item") if op_type == "Put" else op.get("Key")
    if not isinstance(attrs, dict) or table.hash_key_attr not in attrs:
        return None
    if table.range_key_attr is not None and table.range_key_attr not in attrs:
        return None
    try:
        hash_value = DynamoType(attrs[table.hash_key_attr])
        range_value = (
            DynamoType(attrs[table.range_key_attr]) if table.range_key_attr is not None else None
        )
    except Exception:
        return None
    return table, hash_value, range_value


def _restore(table, hash_value, range_value, item):
    if item is None:
        table.delete_item(hash_value, range_value)
    elif range_value is not None:
        table.items[hash_value][range_value] = item
    else:
        table.items[hash_value] = item


def transact_write_items(self, transact_items):
    saved = []
    for entry in transact_items:
        if not isinstance(entry, dict) or len(entry) != 1:
            continue
        op_type, op = next(iter(entry.items()))
        key = _item_key(self, op_type, op) if isinstance(op, dict) else None
        if key is not None:
            table, hash_value, range_value = key
            saved.append((*key, copy.deepcopy(table.get_item(hash_value, range_value))))
    try:
        return _transact_write_items(self, transact_items)
    except Exception:
        for table, hash_value, range_value, item in reversed(saved):
            _restore(table, hash_value, range_value, item)
        raise


dynamodb_models.DynamoDBBackend.transact_write_items = transact_write_items

# 3. Fair queues.
NOISY_SHARE = 0.1
NOISY_IN_FLIGHT = 30


def _fair_messages(queue):
    visible = [m for m in queue._messages if m.visible and not m.delayed]
    if queue.fifo_queue:
        return visible
    flying = [m for m in queue._pending_messages if not m.visible]
    in_flight = Counter(m.group_id for m in flying if m.group_id is not None)
    total = len(flying)
    now = time.time()
    processing = Counter()
    for m in flying:
        if m.group_id is not None:
            processing[m.group_id] += now - getattr(m, "_received_at", now)
    processing_total = sum(processing.values())
    noisy = {
        group
        for group, n in in_flight.items()
        if (n >= NOISY_IN_FLIGHT and n > NOISY_SHARE * total)
        or (processing_total > 0 and processing[group] > NOISY_SHARE * processing_total)
    }
    if not noisy:
        return visible
    # Stable: quiet tenants' messages in their order, then the noisy ones, fewest in flight first.
    return sorted(visible, key=lambda m: in_flight[m.group_id] if m.group_id in noisy else 0)


sqs_models.Queue.messages = property(_fair_messages)
_mark_received = sqs_models.Message.mark_received


def _mark_received_at(message, visibility_timeout=None):
    _mark_received(message, visibility_timeout)
    message._received_at = time.time()


sqs_models.Message.mark_received = _mark_received_at


# 4. Receives that do not walk the queue once per message returned.
def _message_retained(self, queue_name, message):
    retention = self.get_queue(queue_name).message_retention_period
    return retention + message.sent_timestamp / 1000 > time.time()


_unix_time_millis = sqs_models.unix_time_millis
sqs_models.SQSBackend.is_message_valid_based_on_retention_period = _message_retained
sqs_models.unix_time_millis = lambda dt=None: time.time() * 1000 if dt is None else _unix_time_millis(dt)



# 5. Routing kept per host.
_MOTO_MODULES = frozenset(moto_backends.list_of_moto_modules())
moto_backends.list_of_moto_modules = lambda: _MOTO_MODULES
_backend_for_host = werkzeug_app.DomainDispatcherApplication.get_backend_for_host
_backends_by_host = {}


def _cached_backend_for_host(self, host):
    if host not in _backends_by_host:
        _backends_by_host[host] = _backend_for_host(self, host)
    return _backends_by_host[host]


werkzeug_app.DomainDispatcherApplication.get_backend_for_host = _cached_backend_for_host


# 6. AttributeValues in the wire form they already have.
def _attribute_value(value):
    """An AttributeValue as JSON: what the generic serializer writes, members that are None left out."""
    out = {}
    for type_name, inner in value.items():
        if inner is None:
            continue
        if type_name == "B":
            inner = _base64(inner)
        elif type_name == "BS":
            inner = [_base64(v) for v in inner]
        elif type_name == "M":
            inner = {k: _attribute_value(v) for k, v in inner.items()}
        elif type_name == "L":
            inner = [_attribute_value(v) for v in inner]
        out[type_name] = inner
    return out


def _base64(value):
    if isinstance(value, str):
        value = value.encode("utf-8")
    return base64.b64encode(value).strip().decode("utf-8")


_serialize_structure = moto_serialize.BaseJSONSerializer._serialize_type_structure


def _serialize_structure_fast(self, serialized, value, shape, key):
    if shape.name == "AttributeValue" and key and isinstance(value, dict):
        serialized[self.get_serialized_name(shape, key)] = _attribute_value(value)
        return
    _serialize_structure(self, serialized, value, shape, key)


moto_serialize.BaseJSONSerializer._serialize_type_structure = _serialize_structure_fast


# 7. A queue's attributes with its message counts from one walk, and none while sending.
_sending = 0


def _message_counts(queue):
    now = time.time() * 1000
    visible = delayed = not_visible = 0
    for m in queue._messages:
        is_delayed = now < m.delayed_until
        if now > m.visible_at:
            visible += not is_delayed
        else:
            not_visible += 1
        delayed += is_delayed
    return {
        "ApproximateNumberOfMessages": visible,
        "ApproximateNumberOfMessagesDelayed": delayed,
        "ApproximateNumberOfMessagesNotVisible": not_visible,
    }


def _queue_attributes(self):
    counts = {} if _sending else _message_counts(self)
    result = {}
    for attribute in self.BASE_ATTRIBUTES:
        if attribute in counts:
            result[attribute] = counts[attribute]
        elif not attribute.startswith("ApproximateNumberOfMessages"):
            result[attribute] = getattr(self, sqs_models.camelcase_to_underscores(attribute))
    if self.fifo_queue:
        for attribute in self.FIFO_ATTRIBUTES:
            result[attribute] = getattr(self, sqs_models.camelcase_to_underscores(attribute))
    if self.kms_master_key_id:
        for attribute in self.KMS_ATTRIBUTES:
            result[attribute] = getattr(self, sqs_models.camelcase_to_underscores(attribute))
    if self.policy:
        result["Policy"] = self.policy
    if self.redrive_policy:
        result["RedrivePolicy"] = json.dumps(self.redrive_policy)
    for key in result:
        if isinstance(result[key], bool):
            result[key] = str(result[key]).lower()
    return result


sqs_models.Queue.attributes = property(_queue_attributes)


def _without_counts(send):
    def sending(*args, **kwargs):
        global _sending
        _sending += 1
        try:
            return send(*args, **kwargs)
        finally:
            _sending -= 1

    return sending


sqs_models.SQSBackend.send_message = _without_counts(sqs_models.SQSBackend.send_message)
sqs_models.SQSBackend.send_message_batch = _without_counts(
    sqs_models.SQSBackend.send_message_batch
)

sys.argv[0] = "moto_server"
moto_server.main()
