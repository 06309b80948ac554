internal import ActionLinksXMLSec

/// The namespaces a SAML 2.0 response uses.
enum SAMLNamespace {
    static let protocol_ = "urn:oasis:names:tc:SAML:2.0:protocol"
    static let assertion = "urn:oasis:names:tc:SAML:2.0:assertion"
    static let signature = "http://www.w3.org/2000/09/xmldsig#"
    static let xml = "http://www.w3.org/XML/1998/namespace"
    static let schemaInstance = "http://www.w3.org/2001/XMLSchema-instance"
}

/// libxml2 and xmlsec, initialised once for the process.
enum XMLSecurity {
    /// 0 when initialised; the failing step otherwise (the library is then unusable).
    static let status: Int32 = actionlinks_xmlsec_initialize()
}

/// A parsed XML document (libxml2), freed with the value. Not shared between threads.
final class XMLDocument {
    let pointer: xmlDocPtr

    /// Parses `bytes` as XML without the network, DTD loading or entity substitution, quietly;
    /// `nil` when it is not well-formed. Nesting is limited by libxml2 (256 levels).
    init?(parsing bytes: [UInt8]) {
        guard XMLSecurity.status == 0, !bytes.isEmpty, bytes.count < Int(Int32.max) else { return nil }
        let options =
            Int32(XML_PARSE_NONET.rawValue) | Int32(XML_PARSE_NOERROR.rawValue) | Int32(XML_PARSE_NOWARNING.rawValue)
        let document = bytes.withUnsafeBufferPointer { buffer in
            buffer.baseAddress!.withMemoryRebound(to: CChar.self, capacity: buffer.count) {
                xmlReadMemory($0, Int32(buffer.count), nil, nil, options)
            }
        }
        guard let document else { return nil }
        pointer = document
    }

    deinit { xmlFreeDoc(pointer) }

    /// Whether the document declares a DOCTYPE (which could declare IDs and entities).
    var hasDTD: Bool { actionlinks_xml_has_dtd(pointer) != 0 }

    var root: XMLElement? { xmlDocGetRootElement(pointer).map(XMLElement.init) }
}

/// An element of an ``XMLDocument`` (valid while the document lives).
struct XMLElement {
    let node: xmlNodePtr

    init(_ node: xmlNodePtr) { self.node = node }

    var name: String { node.pointee.name.map { String(cString: $0) } ?? "" }
    var namespace: String? { node.pointee.ns?.pointee.href.map { String(cString: $0) } }

    func `is`(_ name: String, in namespace: String) -> Bool { self.name == name && self.namespace == namespace }

    /// The element children, in order.
    var children: [XMLElement] {
        var found: [XMLElement] = []
        var child = node.pointee.children
        while let current = child {
            if current.pointee.type == XML_ELEMENT_NODE { found.append(XMLElement(current)) }
            child = current.pointee.next
        }
        return found
    }

    func children(_ name: String, in namespace: String) -> [XMLElement] { children.filter { $0.is(name, in: namespace) } }

    func child(_ name: String, in namespace: String) -> XMLElement? { children.first { $0.is(name, in: namespace) } }

    var parent: XMLElement? {
        guard let parent = node.pointee.parent, parent.pointee.type == XML_ELEMENT_NODE else { return nil }
        return XMLElement(parent)
    }

    /// Every element below this one (not itself), depth first.
    var descendants: [XMLElement] {
        var found: [XMLElement] = []
        var stack = children.reversed() as [XMLElement]
        while let next = stack.popLast() {
            found.append(next)
            stack.append(contentsOf: next.children.reversed())
        }
        return found
    }

    /// The attribute without a namespace called `name`, as the node libxml2 keeps.
    func attributeNode(_ name: String) -> xmlAttrPtr? {
        var property = node.pointee.properties
        while let current = property {
            if current.pointee.ns == nil, let attributeName = current.pointee.name, String(cString: attributeName) == name {
                return current
            }
            property = current.pointee.next
        }
        return nil
    }

    /// The value of the attribute without a namespace called `name`.
    func attribute(_ name: String) -> String? { attributeNode(name).map(Self.value) }

    /// The attributes in a namespace, as (local name, value).
    func attributes(in namespace: String) -> [(String, String)] {
        var found: [(String, String)] = []
        var property = node.pointee.properties
        while let current = property {
            if let href = current.pointee.ns?.pointee.href, String(cString: href) == namespace, let name = current.pointee.name {
                found.append((String(cString: name), Self.value(current)))
            }
            property = current.pointee.next
        }
        return found
    }

    /// The text of the element's own text and CDATA children, joined (comments and child elements
    /// left out: exclusive canonicalisation drops comments, so a comment inside a signed value must
    /// not cut it short).
    var text: String {
        var text = ""
        var child = node.pointee.children
        while let current = child {
            if current.pointee.type == XML_TEXT_NODE || current.pointee.type == XML_CDATA_SECTION_NODE,
                let content = current.pointee.content
            {
                text += String(cString: content)
            }
            child = current.pointee.next
        }
        return text
    }

    /// Every text below the element, in document order (comments left out).
    var deepText: String {
        var text = self.text
        if children.isEmpty { return text }
        text = ""
        var stack: [xmlNodePtr] = []
        var child = node.pointee.children
        while let current = child {
            stack.append(current)
            child = current.pointee.next
        }
        stack.reverse()
        while let current = stack.popLast() {
            if current.pointee.type == XML_TEXT_NODE || current.pointee.type == XML_CDATA_SECTION_NODE,
                let content = current.pointee.content
            {
                text += String(cString: content)
            } else if current.pointee.type == XML_ELEMENT_NODE {
                var inner: [xmlNodePtr] = []
                var next = current.pointee.children
                while let item = next {
                    inner.append(item)
                    next = item.pointee.next
                }
                stack.append(contentsOf: inner.reversed())
            }
        }
        return text
    }

    private static func value(_ attribute: xmlAttrPtr) -> String {
        var value = ""
        var child = attribute.pointee.children
        while let text = child {
            if let content = text.pointee.content { value += String(cString: content) }
            child = text.pointee.next
        }
        return value
    }
}
